// A request raced across clusters (app/run/launch/cluster_race.hpp, docs/multi-cluster.md): the
// first cluster whose job starts is chosen, the choice is recorded in every member before `go`
// is written, the others get `stop` and scancel, and a choice once made is never made again.

#include "app/request/lookup.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "unit/app/run/launch/two_clusters.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

TEST_CASE("cluster race: the cluster whose job started is chosen, go there, stop and scancel elsewhere")
{
  TwoClusters t;
  t.add_members();
  t.a().on([](const auto& a) { return has(a, "squeue") && has(a, "101"); },
           Cluster::ok(squeue_row("101", "PENDING", "", "0:00")));
  t.b().on([](const auto& a) { return has(a, "squeue") && has(a, "7"); },
           Cluster::ok(squeue_row("7", "RUNNING", "h1")));
  t.b().on([](const auto& a) { return writes(a, "go"); }, Cluster::ok());
  t.a().on([](const auto& a) { return writes(a, "stop"); }, Cluster::ok());
  t.a().on([](const auto& a) { return has(a, "scancel") && has(a, "101"); }, Cluster::ok());
  auto rec = t.read("aaaa0001");
  auto members = load_race_members(t.world.env, rec);
  REQUIRE(members);
  REQUIRE(members->size() == 2);
  auto step = settle_step(t.world.env, *members);
  REQUIRE(step);
  REQUIRE(step->chosen);
  CHECK(*step->chosen == 1);
  CHECK(t.a().done());
  CHECK(t.b().done());
  CHECK(t.a().unexpected.empty());
  CHECK(t.b().unexpected.empty());
  // The go names the chosen member's own request directory.
  CHECK(mentions(t.b().seen.back(), "/home/alice/.rv/requests/bbbb0002"));
  // Recorded in both members; the loser ended cancelled, its job too.
  CHECK(t.read("aaaa0001").race.value("chosen", "") == "bbbb0002");
  CHECK(t.read("bbbb0002").race.value("chosen", "") == "bbbb0002");
  CHECK(t.read("aaaa0001").state == RequestState::cancelled);
  CHECK(t.read("aaaa0001").jobs[0].state == slurm::JobState::cancelled);
  CHECK(t.read("bbbb0002").state == RequestState::submitted);
}

TEST_CASE("cluster race: nothing started: nothing chosen, nothing written, nothing cancelled")
{
  TwoClusters t;
  t.add_members();
  t.a().on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("101", "PENDING", "", "0:00")));
  t.b().on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("7", "PENDING", "", "0:00")));
  auto members = load_race_members(t.world.env, t.read("aaaa0001"));
  REQUIRE(members);
  auto step = settle_step(t.world.env, *members);
  REQUIRE(step);
  CHECK_FALSE(step->chosen);
  CHECK_FALSE(step->over);
  CHECK(t.a().seen.size() == 1);
  CHECK(t.b().seen.size() == 1);
  CHECK(t.read("aaaa0001").race.value("chosen", "x").empty());
}

TEST_CASE("cluster race: a choice once recorded is applied again, never replaced by a later start")
{
  TwoClusters t;
  t.add_members("aaaa0001"); // an earlier rv chose A, then died before writing go
  t.a().on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("101", "RUNNING", "a1")));
  t.b().on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("7", "RUNNING", "h1", "0:50")));
  t.a().on([](const auto& a) { return writes(a, "go"); }, Cluster::ok());
  t.b().on([](const auto& a) { return writes(a, "stop"); }, Cluster::ok());
  t.b().on([](const auto& a) { return has(a, "scancel") && has(a, "7"); }, Cluster::ok());
  auto members = load_race_members(t.world.env, t.read("bbbb0002"));
  REQUIRE(members);
  auto step = settle_step(t.world.env, *members);
  REQUIRE(step);
  REQUIRE(step->chosen);
  CHECK((*members)[*step->chosen].rec.id == "aaaa0001");
  CHECK(t.a().done());
  CHECK(t.b().done());
  CHECK(t.read("bbbb0002").state == RequestState::cancelled);
}

TEST_CASE("cluster race: an unreachable cluster is named, the race goes on, its jobs stay live for later")
{
  TwoClusters t;
  t.add_members();
  t.a().on([](const auto& a) { return has(a, "squeue"); }, Error{ErrorCode::unreachable, "connection refused", ""});
  t.b().on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("7", "RUNNING", "h1")));
  t.b().on([](const auto& a) { return writes(a, "go"); }, Cluster::ok());
  t.a().on([](const auto& a) { return writes(a, "stop"); }, Error{ErrorCode::unreachable, "connection refused", ""});
  t.a().on([](const auto& a) { return has(a, "scancel"); }, Error{ErrorCode::unreachable, "connection refused", ""});
  auto members = load_race_members(t.world.env, t.read("aaaa0001"));
  REQUIRE(members);
  auto step = settle_step(t.world.env, *members);
  REQUIRE(step);
  REQUIRE(step->chosen);
  CHECK(*step->chosen == 1);
  REQUIRE(step->unreached.size() == 1);
  CHECK(step->unreached[0].find("A: connection refused") == 0);
  // A could not be stopped: it stays live (its gate ends a started job; `rv ps` tries again).
  CHECK(t.read("aaaa0001").state == RequestState::submitted);
  CHECK(t.read("aaaa0001").race.value("chosen", "") == "bbbb0002");
}

TEST_CASE("cluster race: every job ended without a start: the group is over and fails")
{
  TwoClusters t;
  t.add_members();
  t.a().on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("101", "CANCELLED", "", "0:00")));
  t.b().on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("7", "FAILED", "", "0:00")));
  auto members = load_race_members(t.world.env, t.read("aaaa0001"));
  REQUIRE(members);
  auto step = settle_step(t.world.env, *members);
  REQUIRE(step);
  CHECK_FALSE(step->chosen);
  CHECK(step->over);
  CHECK(t.read("aaaa0001").state == RequestState::failed);
  CHECK(t.read("bbbb0002").state == RequestState::failed);
}

TEST_CASE("cluster race: choose_member takes the earliest start, and ignores ended jobs")
{
  std::vector<MemberPoll> polls(3);
  polls[0].views["1"].state = slurm::JobState::pending;
  polls[1].views["2"].state = slurm::JobState::running;
  polls[1].views["2"].start_epoch = 200;
  polls[2].views["3"].state = slurm::JobState::running;
  polls[2].views["3"].start_epoch = 100;
  CHECK(choose_member(polls) == std::optional<std::size_t>(2));
  polls[2].views["3"].state = slurm::JobState::failed; // it ended at the gate (exit 95)
  CHECK(choose_member(polls) == std::optional<std::size_t>(1));
  polls[1].views["2"].state = slurm::JobState::completed;
  CHECK_FALSE(choose_member(polls));
}

TEST_CASE("cluster race: a command naming the loser goes to the chosen member's cluster")
{
  TwoClusters t;
  t.add_members("bbbb0002");
  auto r = route_request(t.world.requests, "aaaa0001");
  REQUIRE(r);
  CHECK(r->destination == "B");
  CHECK(r->id == "bbbb0002");
  auto by_job = route_request(t.world.requests, "101"); // the loser's job id
  REQUIRE(by_job);
  CHECK(by_job->id == "bbbb0002");
  CHECK_FALSE(route_request(t.world.requests, "nosuchrequest"));
  CHECK_FALSE(route_request(t.world.requests, "")); // no KEY: each command's own meaning, not routed
}

TEST_CASE("cluster race: the background settler polls again after half a second, and chooses what started")
{
  TwoClusters t;
  t.add_members();
  // First step: nothing started. Second: B's job runs (it waits at its gate until a poll sees it).
  t.a().on([](const auto& a) { return has(a, "squeue") && has(a, "101"); },
           Cluster::ok(squeue_row("101", "PENDING", "", "0:00")));
  t.b().on([](const auto& a) { return has(a, "squeue") && has(a, "7"); },
           Cluster::ok(squeue_row("7", "PENDING", "", "0:00")));
  t.a().on([](const auto& a) { return has(a, "squeue") && has(a, "101"); },
           Cluster::ok(squeue_row("101", "PENDING", "", "0:00")));
  t.b().on([](const auto& a) { return has(a, "squeue") && has(a, "7"); },
           Cluster::ok(squeue_row("7", "RUNNING", "h1")));
  t.b().on([](const auto& a) { return writes(a, "go"); }, Cluster::ok());
  t.a().on([](const auto& a) { return writes(a, "stop"); }, Cluster::ok());
  t.a().on([](const auto& a) { return has(a, "scancel") && has(a, "101"); }, Cluster::ok());
  auto rc = settle_race(t.world.env, "aaaa0001");
  REQUIRE(rc);
  CHECK(*rc == 0);
  CHECK(t.world.clock.slept_ms() == 500);
  CHECK(t.a().done());
  CHECK(t.b().done());
  CHECK(t.read("aaaa0001").race.value("chosen", "") == "bbbb0002");
}

// S9 (security review 3): the background settler has no terminal; on a host that wants a second
// factor every poll was a fresh, failing login, every 5 s, with no end.
TEST_CASE("cluster race: the background settler waits minutes after a failed login, and stops after a bound")
{
  TwoClusters t;
  t.add_members();
  const Error refused{ErrorCode::auth_failed, "ssh A: keyboard-interactive: no terminal to answer the prompt", ""};
  for (int i = 0; i < LoginBackoff::k_max; ++i) {
    t.a().on([](const auto& a) { return has(a, "squeue"); }, refused);
    t.b().on([](const auto& a) { return has(a, "squeue"); }, refused);
  }
  // Past the bound, the clusters would answer (a job started on B): a settler that kept trying
  // would choose it.
  auto answer = [](std::string row) {
    return [row](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
      return has(a, "squeue") ? Cluster::ok(row) : Cluster::ok();
    };
  };
  t.a().fallback = answer(squeue_row("101", "PENDING", "", "0:00"));
  t.b().fallback = answer(squeue_row("7", "RUNNING", "h1"));
  auto rc = settle_race(t.world.env, "aaaa0001");
  REQUIRE(rc);
  CHECK(*rc == 1); // stopped: `rv ps` settles it
  CHECK(t.a().done());
  CHECK(t.b().done());
  CHECK(t.a().seen.size() == static_cast<std::size_t>(LoginBackoff::k_max)); // one login per try, no more
  // 1 + 2 + 4 + 8 minutes between the five tries (and the settler's own polls of at most 5 s).
  CHECK(t.world.clock.slept_ms() >= 15 * 60 * 1000);
  CHECK(t.world.clock.slept_ms() < 16 * 60 * 1000);
  CHECK(t.read("aaaa0001").race.value("chosen", "") == "");
}

TEST_CASE("login backoff: 1, 2, 4, 8, 10, 10 minutes, no try before the wait is over, a login resets it")
{
  using std::chrono::minutes;
  const LoginBackoff::time_point t0{std::chrono::hours(1)};
  LoginBackoff b;
  CHECK(b.may_try(t0));
  CHECK(b.failed(t0) == minutes(1));
  CHECK_FALSE(b.may_try(t0 + std::chrono::seconds(59)));
  CHECK(b.may_try(t0 + minutes(1)));
  CHECK(b.failed(t0) == minutes(2));
  b.succeeded();
  CHECK(b.failures() == 0);
  CHECK(b.may_try(t0));
  std::vector<std::chrono::milliseconds> waits;
  for (int i = 0; i < LoginBackoff::k_max; ++i) {
    CHECK_FALSE(b.exhausted());
    waits.push_back(b.failed(t0));
  }
  CHECK(b.exhausted());
  CHECK(waits == std::vector<std::chrono::milliseconds>{minutes(1), minutes(2), minutes(4), minutes(8), minutes(10)});
  CHECK(b.failed(t0) == minutes(10));
  CHECK(LoginBackoff::is_login_failure(Error{ErrorCode::auth_failed, "", ""}));
  CHECK_FALSE(LoginBackoff::is_login_failure(Error{ErrorCode::unreachable, "", ""}));
}

// S6 (security review 3): a member still `submitting` (its sbatch answer lost) holds the
// configured root `~/.rv`; its stop used to make a directory literally named `~` and its jobs,
// never recorded, were left to run. The root is resolved on the cluster and the jobs are found by
// their comment and cancelled before the member is ended.
TEST_CASE(
    "cluster race: a losing member still submitting is stopped under its resolved root, its jobs found and cancelled")
{
  TwoClusters t;
  t.add_members();
  auto a = t.read("aaaa0001");
  a.state = RequestState::submitting;
  a.remote_root = "~/.rv";
  a.jobs.clear();
  save(t.world.requests, a);
  t.b().on([](const auto& argv) { return has(argv, "squeue") && has(argv, "7"); },
           Cluster::ok(squeue_row("7", "RUNNING", "h1")));
  t.b().on([](const auto& argv) { return writes(argv, "go"); }, Cluster::ok());
  std::vector<std::string> stop_argv;
  t.a().on(
      [&](const auto& argv) {
        stop_argv = argv;
        return argv.size() > 2 && argv.front() == "sh" && argv.back() == "stop";
      },
      Cluster::ok());
  t.a().on([](const auto& argv) { return has(argv, "squeue") && has(argv, "-n") && has(argv, "train"); },
           Cluster::ok("55|PENDING|rv:aaaa0001|train\n56|PENDING|rv:other|train\n"));
  t.a().on([](const auto& argv) { return has(argv, "scancel") && has(argv, "--me") && has(argv, "55"); },
           Cluster::ok());
  auto members = load_race_members(t.world.env, t.read("bbbb0002"));
  REQUIRE(members);
  auto step = settle_step(t.world.env, *members);
  REQUIRE(step);
  REQUIRE(step->chosen);
  CHECK((*members)[*step->chosen].rec.id == "bbbb0002");
  CHECK(t.a().unexpected.empty());
  CHECK(t.a().done());
  // The stop's directory is resolved on the cluster, not used as the literal "~/.rv/...".
  REQUIRE(stop_argv.size() > 4);
  CHECK(stop_argv[2].find("rv_abs") != std::string::npos);
  CHECK(stop_argv[stop_argv.size() - 2] == "~/.rv/requests/aaaa0001");
  const auto ended = t.read("aaaa0001");
  CHECK(ended.state == RequestState::cancelled);
  CHECK(ended.job_ids() == std::vector<std::string>{"55"});
  CHECK(ended.jobs[0].state == slurm::JobState::cancelled);
}

// `list_requests` (app/request/lookup.hpp) lists; it no longer settles. Its callers (`rv ps`,
// `rv gpu`) settle first, so they still show a race no rv settled as settled.
TEST_CASE("cluster race: list_requests does not settle a race, settle_open_races before it does")
{
  TwoClusters t;
  t.add_members();
  for (const auto* id : {"aaaa0001", "bbbb0002"}) { // submitted from another machine's view: each on its cluster
    auto r = t.read(id);
    r.host = "login-" + r.destination;
    save(t.world.requests, r);
  }
  auto answer = [](std::string row) {
    return [row](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
      return has(a, "squeue") ? Cluster::ok(row) : Cluster::ok();
    };
  };
  t.a().fallback = answer(squeue_row("101", "PENDING", "", "0:00"));
  t.b().fallback = answer(squeue_row("7", "RUNNING", "h1"));
  auto go_written = [&] {
    return std::any_of(t.b().seen.begin(), t.b().seen.end(), [](const auto& a) { return writes(a, "go"); });
  };

  auto listed = list_requests(t.world.env, true);
  REQUIRE(listed);
  CHECK(listed->size() == 2);
  CHECK_FALSE(go_written());
  CHECK(t.read("aaaa0001").race.value("chosen", "x").empty());
  for (const auto& a : t.a().seen) {
    CHECK_FALSE(has(a, "scancel"));
  }

  settle_open_races(t.world.env); // what `rv ps` runs before it lists
  CHECK(go_written());
  CHECK(t.read("aaaa0001").race.value("chosen", "") == "bbbb0002");
  CHECK(std::any_of(t.a().seen.begin(), t.a().seen.end(),
                    [](const auto& a) { return has(a, "scancel") && has(a, "101"); }));
  auto after = list_requests(t.world.env, true);
  REQUIRE(after);
  for (const auto& r : *after) {
    if (r.id == "aaaa0001") {
      CHECK(r.state == RequestState::cancelled);
    }
  }
}
