// One request raced across two scripted clusters, end to end (app/run/launch/across.hpp,
// docs/multi-cluster.md): each cluster submits a member request, the settle loop chooses the
// cluster whose job starts first and cancels the others, then rv follows the chosen member.
// Every assertion is on what the fake login nodes saw (the scancel argv) and on the saved records.

#include "app/run/launch/across.hpp"
#include "core/interrupt.hpp"
#include "unit/app/run/launch/two_clusters.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

namespace {

// The plan on each cluster: one strategy (s1, a100, job name "train"), A ranked first.
AcrossPlan plans_on(TwoClusters& t)
{
  auto one = two_strategies();
  one.plan.strategies.resize(1);
  AcrossPlan p;
  p.clusters.push_back({"A", &t.world.env, one});
  p.clusters.push_back({"B", &t.b_env, one});
  return p;
}

// `rv run -f python train.py` across the clusters; smart execution has nothing to sync.
AcrossLaunch following(AcrossMode mode = AcrossMode::follow)
{
  AcrossLaunch how;
  how.mode = mode;
  how.line = "python train.py";
  how.prepare = [](Env&) -> Result<SmartRun> { return SmartRun{}; };
  return how;
}

// The stored member records by cluster ("A", "B": the Env's destination).
std::map<std::string, RequestRecord> members_by_cluster(TwoClusters& t)
{
  std::map<std::string, RequestRecord> out;
  auto all = t.world.requests.list();
  REQUIRE(all);
  for (const auto& j : *all) {
    auto r = request_from_json(j);
    REQUIRE(r);
    out[r->destination] = *r;
  }
  return out;
}

// The scancel commands a login node saw.
std::vector<std::vector<std::string>> scancels(const Cluster& c)
{
  std::vector<std::vector<std::string>> out;
  std::copy_if(c.seen.begin(), c.seen.end(), std::back_inserter(out),
               [](const auto& a) { return !a.empty() && a.front() == "scancel"; });
  return out;
}

bool is_squeue_of(const std::vector<std::string>& a, const std::string& id)
{
  return has(a, "squeue") && has(a, id);
}

// Each cluster submits its member: job `a_job` on A, `b_job` on B ("" = that cluster refuses).
void expect_members(TwoClusters& t, const std::string& a_job, const std::string& b_job)
{
  expect_prepare(t.a());
  expect_sbatch(t.a(), a_job, a_job.empty() ? "QOSMaxSubmitJobPerUserLimit" : "");
  expect_prepare(t.b());
  expect_sbatch(t.b(), b_job, b_job.empty() ? "Invalid account or account/partition combination specified" : "");
}

// The chosen member goes on as on one cluster: its own race (job `id` holds the claim), then its
// logs (`out`) until the job completes; it left no next checkpoint segment.
void expect_chosen_runs(Cluster& c, const std::string& id, const std::string& nodes, const std::string& out)
{
  expect_win(c, id, squeue_row(id, "RUNNING", nodes), id);
  c.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  expect_follow(c, id, "COMPLETED", "0:0", out);
  c.on([id](const auto& a) { return a.front() == "cat" && mentions(a, "next." + id); }, Cluster::reply(1));
}

// Every scripted step was taken, and nothing else was asked.
void check_scripts_done(TwoClusters& t)
{
  CHECK(t.a().done());
  CHECK(t.b().done());
  CHECK(t.a().unexpected.empty());
  CHECK(t.b().unexpected.empty());
}

} // namespace

TEST_CASE("across: the first cluster whose job starts is chosen, the other is cancelled and both records say so")
{
  TwoClusters t;
  expect_members(t, "801", "7");
  // First step: both pending. Second: A's job runs (at its gate): A is chosen.
  t.a().on([](const auto& a) { return is_squeue_of(a, "801"); }, Cluster::ok(squeue_row("801", "PENDING", "", "0:00")));
  t.b().on([](const auto& a) { return is_squeue_of(a, "7"); }, Cluster::ok(squeue_row("7", "PENDING", "", "0:00")));
  t.a().on([](const auto& a) { return is_squeue_of(a, "801"); }, Cluster::ok(squeue_row("801", "RUNNING", "a100-1")));
  t.b().on([](const auto& a) { return is_squeue_of(a, "7"); }, Cluster::ok(squeue_row("7", "PENDING", "", "0:00")));
  t.a().on([](const auto& a) { return writes(a, "go"); }, Cluster::ok());
  t.b().on([](const auto& a) { return writes(a, "stop"); }, Cluster::ok());
  t.b().on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "7"};
      },
      Cluster::ok());
  expect_chosen_runs(t.a(), "801", "a100-1", "epoch 1\n");

  auto rc = launch_across(t.world.env, plans_on(t), following());
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  check_scripts_done(t);
  CHECK(t.world.output.stdout_text == "epoch 1\n");
  CHECK(t.world.clock.slept_ms() >= 500); // one settling wait between the two steps
  // Only B's job was cancelled; A's never.
  CHECK(scancels(t.a()).empty());
  CHECK(scancels(t.b()) == std::vector<std::vector<std::string>>{{"scancel", "--me", "--name=train", "7"}});
  auto recs = members_by_cluster(t);
  REQUIRE(recs.size() == 2);
  const auto& a = recs["A"];
  const auto& b = recs["B"];
  CHECK(a.race.value("chosen", "") == a.id); // the record says which won, in both members
  CHECK(b.race.value("chosen", "") == a.id);
  CHECK(a.race.value("group", "") == b.race.value("group", "x"));
  CHECK(a.state == RequestState::done);
  CHECK(b.state == RequestState::cancelled);
  CHECK(b.jobs[0].state == slurm::JobState::cancelled);
  CHECK(t.settled_in_background.empty()); // -f: this rv settles it, no background rv
}

TEST_CASE("across: a cluster that refuses the submission is left out, the race goes on with the other")
{
  TwoClusters t;
  expect_members(t, "", "7");
  t.b().on([](const auto& a) { return is_squeue_of(a, "7"); }, Cluster::ok(squeue_row("7", "RUNNING", "h1")));
  t.b().on([](const auto& a) { return writes(a, "go"); }, Cluster::ok());
  expect_chosen_runs(t.b(), "7", "h1", "on B\n");

  auto rc = launch_across(t.world.env, plans_on(t), following());
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  check_scripts_done(t);
  CHECK(t.world.output.stdout_text == "on B\n");
  // A took nothing, so nothing is polled or cancelled there after its refusal.
  CHECK_FALSE(std::any_of(t.a().seen.begin(), t.a().seen.end(), [](const auto& a) { return has(a, "squeue"); }));
  CHECK(scancels(t.a()).empty());
  CHECK(scancels(t.b()).empty());
  auto recs = members_by_cluster(t);
  REQUIRE(recs.size() == 2);
  CHECK(recs["A"].state == RequestState::failed);
  CHECK(recs["B"].state == RequestState::done);
  CHECK(recs["B"].race.value("chosen", "") == recs["B"].id);
}

TEST_CASE("across: every cluster refuses: a clear error, and no record or job left pending")
{
  TwoClusters t;
  expect_members(t, "", "");

  auto rc = launch_across(t.world.env, plans_on(t), following());
  REQUIRE_FALSE(rc);
  CHECK(rc.error().code == ErrorCode::slurm_rejected);
  CHECK(rc.error().message == "no cluster took the request (the reasons are above)");
  check_scripts_done(t);
  CHECK(scancels(t.a()).empty());
  CHECK(scancels(t.b()).empty());
  CHECK(t.settled_in_background.empty());
  auto recs = members_by_cluster(t);
  REQUIRE(recs.size() == 2);
  for (const auto& [cluster, r] : recs) {
    CAPTURE(cluster);
    CHECK(r.state == RequestState::failed);
    CHECK(is_final_state(r.state));
    CHECK(r.job_ids().empty()); // no job id: nothing queued anywhere
  }
}

TEST_CASE("across: Ctrl-C during the race cancels every cluster's jobs and ends every member cancelled")
{
  TwoClusters t;
  expect_members(t, "801", "7");
  t.a().on(
      [](const auto& a) {
        rv::raise_interrupt(2); // Ctrl-C while the race waits for a start
        return is_squeue_of(a, "801");
      },
      Cluster::ok(squeue_row("801", "PENDING", "", "0:00")));
  t.b().on([](const auto& a) { return is_squeue_of(a, "7"); }, Cluster::ok(squeue_row("7", "PENDING", "", "0:00")));
  for (auto* c : {&t.a(), &t.b()}) {
    c->on([](const auto& a) { return writes(a, "stop"); }, Cluster::ok());
    c->on([](const auto& a) { return has(a, "scancel"); }, Cluster::ok());
  }

  auto rc = launch_across(t.world.env, plans_on(t), following());
  rv::clear_interrupt();
  REQUIRE_FALSE(rc);
  CHECK(rc.error().code == ErrorCode::interrupted);
  CHECK(rc.error().message.find("cancelled every job of race") != std::string::npos);
  check_scripts_done(t);
  CHECK(scancels(t.a()) == std::vector<std::vector<std::string>>{{"scancel", "--me", "--name=train", "801"}});
  CHECK(scancels(t.b()) == std::vector<std::vector<std::string>>{{"scancel", "--me", "--name=train", "7"}});
  auto recs = members_by_cluster(t);
  REQUIRE(recs.size() == 2);
  for (const auto& [cluster, r] : recs) {
    CAPTURE(cluster);
    CHECK(r.state == RequestState::cancelled);
    CHECK(r.jobs[0].state == slurm::JobState::cancelled);
    CHECK(r.race.value("chosen", "x").empty()); // nothing was chosen
  }
}

TEST_CASE("across: every job ends before any starts: the race fails and every member ends failed")
{
  TwoClusters t;
  expect_members(t, "801", "7");
  t.a().on([](const auto& a) { return is_squeue_of(a, "801"); }, Cluster::ok(squeue_row("801", "FAILED", "", "0:00")));
  t.b().on([](const auto& a) { return is_squeue_of(a, "7"); }, Cluster::ok(squeue_row("7", "CANCELLED", "", "0:00")));

  auto rc = launch_across(t.world.env, plans_on(t), following());
  REQUIRE_FALSE(rc);
  CHECK(rc.error().code == ErrorCode::slurm_rejected);
  CHECK(rc.error().message.find("ended before any started") != std::string::npos);
  check_scripts_done(t);
  CHECK(scancels(t.a()).empty()); // ended jobs are not cancelled again
  CHECK(scancels(t.b()).empty());
  for (const auto& [cluster, r] : members_by_cluster(t)) {
    CAPTURE(cluster);
    CHECK(r.state == RequestState::failed);
  }
}

TEST_CASE("across: rv run without -f submits on every cluster and hands the race to a background rv")
{
  TwoClusters t;
  expect_members(t, "801", "7");

  auto rc = launch_across(t.world.env, plans_on(t), following(AcrossMode::submit));
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  check_scripts_done(t);
  auto recs = members_by_cluster(t);
  REQUIRE(recs.size() == 2);
  // The background rv settles the group of the first member (A's); nothing polled or cancelled here.
  CHECK(t.settled_in_background == std::vector<std::string>{recs["A"].id});
  CHECK(scancels(t.a()).empty());
  CHECK(scancels(t.b()).empty());
  for (const auto& [cluster, r] : recs) {
    CAPTURE(cluster);
    CHECK(r.state == RequestState::submitted);
    CHECK(r.race.value("chosen", "x").empty());
    CHECK(r.race["members"].size() == 2);
  }
  CHECK(t.world.output.stdout_text.find("next: rv logs -f " + recs["A"].id) != std::string::npos);
}
