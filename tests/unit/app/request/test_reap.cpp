#include "app/request/reap.hpp"

#include "app/request/lookup.hpp"
#include "fakes/argv_match.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

using namespace rv;
using namespace rv::app;
using rv::test::FakeClock;
using rv::test::FakeRunner;
using rv::test::has;

namespace {
RequestRecord request(const char* id, RequestState state)
{
  RequestRecord r;
  r.id = id;
  r.name = std::string("rv-") + id;
  r.state = state;
  r.jobs.resize(2);
  for (std::size_t k = 0; k < 2; ++k) {
    r.jobs[k].strategy_id = fmt::format("s{}", k + 1);
    r.jobs[k].partition = k == 0 ? "gpu-a100" : "gpu-v100";
    r.jobs[k].gpu_type = k == 0 ? "a100" : "v100";
    r.jobs[k].job_id = fmt::format("{}", 11 + k);
    r.jobs[k].state = slurm::JobState::pending;
  }
  return r;
}

// A request rv left in 'submitting' before any job id was recorded.
RequestRecord submitting(const char* id)
{
  auto r = request(id, RequestState::submitting);
  r.jobs[0].job_id.clear();
  r.jobs[1].job_id.clear();
  return r;
}

// One squeue row of rv's format for the job `id` named `name` (the request's job name: a row with
// another name is another job that got the same id).
std::string row(const char* id, const char* state, const char* nodes, const std::string& name)
{
  return fmt::format("{}|{}|None|p|{}|1|N/A|N/A|1:00:00|0:05|N/A|{}\n", id, state, nodes, name);
}

store::RecordStore temp_store(const char* name)
{
  auto dir = std::filesystem::temp_directory_path() / fmt::format("rv-reap-{}-{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  return store::RecordStore(dir);
}
} // namespace

TEST_CASE("reap: after rv was killed, the next rv ps cancels the losers of a started winner")
{
  auto store = temp_store("loser");
  std::vector<RequestRecord> reqs = {request("aaaa0001", RequestState::submitted)};
  REQUIRE(store.create(reqs[0].id, to_json(reqs[0])));
  FakeRunner r;
  FakeClock clock;
  r.expect(
      [](const auto& a) { return has(a, "squeue"); },
      FakeRunner::reply(0, row("11", "PENDING", "", "rv-aaaa0001") + row("12", "RUNNING", "v100-1", "rv-aaaa0001")));
  r.expect_prefix({"scancel", "--me", "--name=rv-aaaa0001", "11"}, FakeRunner::reply(0)); // the name guards a reused id
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(r.all_consumed());
  CHECK(report->cancelled == std::vector<std::string>{"11"});
  CHECK(reqs[0].winner == "s2");
  auto saved = store.read("aaaa0001");
  REQUIRE(saved);
  CHECK((*saved)["winner"] == "s2");
  std::filesystem::remove_all(store.dir());
}

// #15 campaign: losers were recorded CANCELLED before scancel ran; when it could not run (the
// connection dropped), they kept pending with a record that no later `rv ps` would act on.
TEST_CASE("reap: a loser whose scancel could not run stays live in the record for the next rv ps")
{
  auto store = temp_store("cancel-failed");
  std::vector<RequestRecord> reqs = {request("aaaa0009", RequestState::submitted)};
  REQUIRE(store.create(reqs[0].id, to_json(reqs[0])));
  FakeRunner r;
  FakeClock clock;
  r.expect(
      [](const auto& a) { return has(a, "squeue"); },
      FakeRunner::reply(0, row("11", "PENDING", "", "rv-aaaa0009") + row("12", "RUNNING", "v100-1", "rv-aaaa0009")));
  // No answer scripted for scancel: the fake fails it as a dropped connection would.
  auto report = refresh_and_reap(r, clock, store, reqs);
  CHECK_FALSE(report);
  auto saved = store.read("aaaa0009");
  REQUIRE(saved);
  CHECK((*saved)["winner"] == "s2");
  CHECK((*saved)["jobs"][0]["state"] == "PENDING");
  CHECK((*saved)["state"] == "won");
  std::filesystem::remove_all(store.dir());
}

TEST_CASE("reap: a request rv left in 'submitting' gets its orphans back by job name")
{
  auto store = temp_store("orphan");
  auto req = submitting("bbbb0002");
  std::vector<RequestRecord> reqs = {req};
  REQUIRE(store.create(req.id, to_json(req)));
  FakeRunner r;
  FakeClock clock;
  r.expect([](const auto& a) { return has(a, "-n") && has(a, "rv-bbbb0002"); },
           FakeRunner::reply(0, "21|PENDING|rv:bbbb0002|rv-bbbb0002\n"));
  r.expect([](const auto& a) { return has(a, "squeue"); },
           FakeRunner::reply(0, row("21", "PENDING", "", "rv-bbbb0002")));
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(report->orphans == std::vector<std::string>{"21"});
  CHECK(reqs[0].job_ids() == std::vector<std::string>{"21"});
  CHECK(reqs[0].state == RequestState::submitted);
  std::filesystem::remove_all(store.dir());
}

// #15 campaign (SIGKILL during submit, before sbatch ran): rv ps found no orphan and recorded the
// request `submitted` with no job at all, a state no command ever moved on from.
TEST_CASE("reap: a request rv left in 'submitting' with no job in the queue is recorded failed")
{
  auto store = temp_store("no-job");
  auto req = submitting("bbbb0003");
  std::vector<RequestRecord> reqs = {req};
  REQUIRE(store.create(req.id, to_json(req)));
  FakeRunner r;
  FakeClock clock;
  r.expect([](const auto& a) { return has(a, "-n") && has(a, "rv-bbbb0003"); }, FakeRunner::reply(0, ""));
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(r.all_consumed());
  CHECK(report->orphans.empty());
  auto saved = store.read("bbbb0003");
  REQUIRE(saved);
  CHECK((*saved)["state"] == "failed");
  std::filesystem::remove_all(store.dir());
}

// #15 campaign (concurrent_ps during submission): rv ps took a live rv's `submitting` record for
// one a dead rv left, adopted its fresh jobs as orphans, made one the winner and cancelled them all.
TEST_CASE("reap: a request whose submission a live rv holds is left to that rv")
{
  auto store = temp_store("held");
  auto req = submitting("bbbb0004");
  std::vector<RequestRecord> reqs = {req};
  REQUIRE(store.create(req.id, to_json(req)));
  {
    auto held = store.hold_submission(req.id);
    REQUIRE(held);
    CHECK(store.submission_held(req.id));
    FakeRunner r; // nothing scripted: any search for orphans would fail the call
    FakeClock clock;
    auto report = refresh_and_reap(r, clock, store, reqs);
    REQUIRE(report);
    CHECK(report->orphans.empty());
    CHECK(reqs[0].state == RequestState::submitting);
  }
  CHECK_FALSE(store.submission_held(req.id)); // released with its holder (a dead rv's too)
  CHECK_FALSE(std::filesystem::exists(store.dir() / ".bbbb0004.submitting"));
  std::filesystem::remove_all(store.dir());
}

// #15 campaign (seed 1125, run 50): `rv ps` read the record while its rv was submitting, and by the
// time it looked at the lock that rv had recorded the job ids and let go: the stale copy's jobs were
// adopted as orphans, one named the winner, and the real winner cancelled mid-run.
TEST_CASE("reap: a stale 'submitting' copy whose rv has since recorded its jobs is read again, not adopted")
{
  auto store = temp_store("stale");
  auto stale = submitting("bbbb0005");
  auto now = request("bbbb0005", RequestState::submitted); // what the live rv saved meanwhile: 11, 12
  REQUIRE(store.create(now.id, to_json(now)));
  std::vector<RequestRecord> reqs = {stale};
  FakeRunner r; // no search for orphans: only the poll of the recorded jobs
  r.expect([](const auto& a) { return has(a, "squeue") && !has(a, "--me"); },
           FakeRunner::reply(0, row("11", "PENDING", "", "rv-bbbb0005") + row("12", "PENDING", "", "rv-bbbb0005")));
  FakeClock clock;
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(r.unexpected().empty());
  CHECK(report->orphans.empty());
  CHECK(report->cancelled.empty());
  CHECK(reqs[0].state == RequestState::submitted);
  CHECK(reqs[0].job_ids() == std::vector<std::string>{"11", "12"});
  std::filesystem::remove_all(store.dir());
}

// #15 defect 2: a shared job name (`--name train`) must not make rv adopt, and later cancel,
// jobs that are not the request's: only the user's own jobs (--me) whose comment is rv:<id>.
TEST_CASE("reap: orphans are only the user's own jobs whose comment names the request")
{
  auto store = temp_store("shared-name");
  auto req = request("dddd0001", RequestState::submitting);
  req.name = "train";
  req.jobs[0].job_id = "21";
  req.jobs[1].job_id.clear();
  std::vector<RequestRecord> reqs = {req};
  REQUIRE(store.create(req.id, to_json(req)));
  FakeRunner r;
  FakeClock clock;
  std::vector<std::string> search;
  r.expect(
      [&](const auto& a) {
        search = a;
        return has(a, "-n");
      },
      FakeRunner::reply(0, "21|PENDING|rv:dddd0001|train\n"  // known already
                           "22|PENDING|rv:dddd0001|train\n"  // the orphan
                           "777|RUNNING|(null)|train\n"      // the user's own unrelated job
                           "778|RUNNING|rv:eeee0002|train\n" // another rv request's job
                           "779|RUNNING|rv:dddd00011|train\n"));
  r.expect([](const auto& a) { return has(a, "squeue"); },
           FakeRunner::reply(0, row("21", "PENDING", "", "train") + row("22", "PENDING", "", "train")));
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(r.all_consumed());
  CHECK(has(search, "--me"));
  CHECK(has(search, "train"));
  CHECK(report->orphans == std::vector<std::string>{"22"});
  CHECK(reqs[0].job_ids() == std::vector<std::string>{"21", "22"});
  CHECK(report->cancelled.empty());
  std::filesystem::remove_all(store.dir());
}

TEST_CASE("reap: nothing to do for finished requests, and no winner means no cancel")
{
  auto store = temp_store("none");
  auto done = request("cccc0003", RequestState::done);
  done.jobs[0].state = slurm::JobState::completed;
  done.jobs[1].state = slurm::JobState::cancelled;
  CHECK(request_finished(done));
  std::vector<RequestRecord> reqs = {done};
  FakeRunner r;
  FakeClock clock;
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(r.seen().empty());

  auto pending = request("dddd0004", RequestState::submitted);
  REQUIRE(store.create(pending.id, to_json(pending)));
  std::vector<RequestRecord> reqs2 = {pending};
  r.expect([](const auto& a) { return has(a, "squeue"); },
           FakeRunner::reply(0, row("11", "PENDING", "", "rv-dddd0004") + row("12", "PENDING", "", "rv-dddd0004")));
  auto report2 = refresh_and_reap(r, clock, store, reqs2);
  REQUIRE(report2);
  CHECK(report2->cancelled.empty());
  std::filesystem::remove_all(store.dir());
}

TEST_CASE("request records round-trip through JSON, and find_request resolves prefixes and job ids")
{
  auto store = temp_store("find");
  auto a = request("abcd1234", RequestState::submitted);
  auto b = request("abef5678", RequestState::done);
  b.jobs[0].job_id = "99";
  REQUIRE(store.create(a.id, to_json(a)));
  REQUIRE(store.create(b.id, to_json(b)));
  auto back = request_from_json(to_json(a));
  REQUIRE(back);
  CHECK(back->jobs.size() == 2);
  CHECK(back->jobs[1].partition == "gpu-v100");
  CHECK(find_request(store, "abcd")->id == "abcd1234");
  CHECK(find_request(store, "99")->id == "abef5678");
  CHECK(find_request(store, "rv-abef5678")->id == "abef5678");
  auto ambiguous = find_request(store, "ab");
  REQUIRE_FALSE(ambiguous);
  CHECK(ambiguous.error().message.find("several") != std::string::npos);
  CHECK_FALSE(find_request(store, "zzz"));
  std::filesystem::remove_all(store.dir());
}

TEST_CASE("reap: the secrets file of a request that ended is deleted, once")
{
  auto store = temp_store("secrets");
  auto done = request("eeee0005", RequestState::done);
  done.jobs[0].state = slurm::JobState::completed;
  done.jobs[1].state = slurm::JobState::cancelled;
  done.secrets = {"HF_TOKEN"};
  done.secrets_file = "/home/u/.rv/requests/eeee0005/env";
  auto live = request("ffff0006", RequestState::submitted);
  live.secrets_file = "/home/u/.rv/requests/ffff0006/env";
  live.jobs[0].job_id = "31";
  live.jobs[1].job_id = "32";
  REQUIRE(store.create(done.id, to_json(done)));
  REQUIRE(store.create(live.id, to_json(live)));
  std::vector<RequestRecord> reqs = {done, live};
  FakeRunner r;
  FakeClock clock;
  r.expect([](const auto& a) { return has(a, "squeue"); },
           FakeRunner::reply(0, row("31", "PENDING", "", "rv-ffff0006") + row("32", "PENDING", "", "rv-ffff0006")));
  r.expect([](const auto& a) { return has(a, "rv-rm") && a.back() == "/home/u/.rv/requests/eeee0005/env"; },
           FakeRunner::reply(0));
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  CHECK(reqs[0].secrets_file.empty());
  CHECK(reqs[1].secrets_file == "/home/u/.rv/requests/ffff0006/env"); // still running: kept
  CHECK((*store.read("eeee0005"))["secrets_file"] == "");
  CHECK((*store.read("eeee0005"))["secrets"] == nlohmann::json::array({"HF_TOKEN"}));
  std::filesystem::remove_all(store.dir());
}

// #15 defect 3: a submission cut off part-way (Ctrl-C, a dropped connection) may have created jobs
// that the record lacks. They are found by comment at once and cancelled, not left running.
TEST_CASE("reap: a failed submission's jobs are found by comment and cancelled at once")
{
  auto store = temp_store("settle");
  auto req = request("ffff0001", RequestState::submitting);
  req.jobs[0].job_id.clear();
  req.jobs[1].job_id.clear();
  REQUIRE(store.create(req.id, to_json(req)));
  FakeRunner r;
  r.expect([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "rv-ffff0001"); },
           FakeRunner::reply(0, "31|PENDING|rv:ffff0001|rv-ffff0001\n777|PENDING|(null)|rv-ffff0001\n"));
  r.expect_prefix({"scancel", "--me", "--name=rv-ffff0001", "31"}, FakeRunner::reply(0));
  // The second search, after the settle gap: nothing new.
  r.expect([](const auto& a) { return has(a, "squeue") && has(a, "--me"); },
           FakeRunner::reply(0, "31|CANCELLED|rv:ffff0001|rv-ffff0001\n"));
  FakeClock clock;
  auto line = settle_failed_submission(r, clock, store, req, RequestState::cancelled);
  CHECK(clock.slept_ms() == k_settle_gap.count());
  CHECK(r.all_consumed());
  CHECK(r.unexpected().empty());
  CHECK(line == "cancelled 31 that sbatch had already created");
  CHECK(req.state == RequestState::cancelled);
  CHECK(req.job_ids() == std::vector<std::string>{"31"});
  CHECK(request_finished(req));
  auto saved = store.read(req.id);
  REQUIRE(saved);
  CHECK((*saved)["state"] == "cancelled");
  std::filesystem::remove_all(store.dir());
}

TEST_CASE("reap: a failed submission whose search cannot run stays searchable for the next rv ps")
{
  auto store = temp_store("settle-down");
  auto req = request("ffff0002", RequestState::failed); // what rv saved before the fix: never searched again
  req.jobs[0].job_id.clear();
  req.jobs[1].job_id.clear();
  REQUIRE(store.create(req.id, to_json(req)));
  struct Down final : proc::Runner {
    Result<proc::Outcome> run(const proc::Command&) override { return fail(ErrorCode::unreachable, "connection lost"); }
    std::string where() const override { return "down"; }
  } down;
  FakeClock no_wait;
  auto line = settle_failed_submission(down, no_wait, store, req, RequestState::failed);
  CHECK(line.find("connection lost") != std::string::npos);
  CHECK(req.state == RequestState::submitting);
  CHECK_FALSE(request_finished(req));
  auto saved = store.read(req.id);
  REQUIRE(saved);
  CHECK((*saved)["state"] == "submitting");

  // The next `rv ps` finds the job sbatch had created, and tracks it.
  std::vector<RequestRecord> reqs = {req};
  FakeRunner r;
  FakeClock clock;
  r.expect([](const auto& a) { return has(a, "--me") && has(a, "rv-ffff0002"); },
           FakeRunner::reply(0, "41|PENDING|rv:ffff0002|rv-ffff0002\n"));
  r.expect([](const auto& a) { return has(a, "squeue"); },
           FakeRunner::reply(0, row("41", "PENDING", "", "rv-ffff0002")));
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(report->orphans == std::vector<std::string>{"41"});
  std::filesystem::remove_all(store.dir());
}

TEST_CASE("reap: a failed submission that created nothing ends in its final state")
{
  auto store = temp_store("settle-none");
  auto req = request("ffff0003", RequestState::submitting);
  req.jobs[0].job_id.clear();
  req.jobs[1].job_id.clear();
  REQUIRE(store.create(req.id, to_json(req)));
  FakeRunner r;
  r.expect([](const auto& a) { return has(a, "--me"); }, FakeRunner::reply(0, ""));
  r.expect([](const auto& a) { return has(a, "--me"); }, FakeRunner::reply(0, ""));
  FakeClock clock;
  CHECK(settle_failed_submission(r, clock, store, req, RequestState::failed) == "no job of it reached the queue");
  CHECK(r.all_consumed());
  CHECK(req.state == RequestState::failed);
  std::filesystem::remove_all(store.dir());
}

// #15 campaign (seed 2511, run 43): Ctrl-C cut the submission's round trip while an sbatch was
// running on the login node; its job appeared after rv's search and ran with no live request.
TEST_CASE("reap: a job an in-flight sbatch creates after the first search is found by the next and cancelled")
{
  auto store = temp_store("settle-late");
  auto req = request("ffff0004", RequestState::submitting);
  req.jobs[0].job_id.clear();
  req.jobs[1].job_id.clear();
  REQUIRE(store.create(req.id, to_json(req)));
  FakeRunner r;
  auto search = [](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "rv-ffff0004"); };
  r.expect(search, FakeRunner::reply(0, "31|PENDING|rv:ffff0004|rv-ffff0004\n"));
  r.expect_prefix({"scancel", "--me", "--name=rv-ffff0004", "31"}, FakeRunner::reply(0));
  r.expect(search, FakeRunner::reply(0, "31|CANCELLED|rv:ffff0004|rv-ffff0004\n32|PENDING|rv:ffff0004|rv-ffff0004\n"));
  r.expect_prefix({"scancel", "--me", "--name=rv-ffff0004", "32"}, FakeRunner::reply(0));
  r.expect(search, FakeRunner::reply(0, "32|CANCELLED|rv:ffff0004|rv-ffff0004\n"));
  FakeClock clock;
  auto line = settle_failed_submission(r, clock, store, req, RequestState::cancelled);
  CHECK(r.all_consumed());
  CHECK(r.unexpected().empty());
  CHECK(line == "cancelled 31 32 that sbatch had already created");
  CHECK(clock.slept_ms() == 2 * k_settle_gap.count());
  CHECK(req.job_ids() == std::vector<std::string>{"31", "32"});
  CHECK(request_finished(req));
  CHECK((*store.read(req.id))["state"] == "cancelled");
  std::filesystem::remove_all(store.dir());
}

// #15 defect 7, the way the real callers write: two rv processes hold the same record; each
// changes its own fields and saves. Neither undoes the other.
TEST_CASE("records: concurrent savers merge their changes instead of writing back stale records")
{
  auto store = temp_store("merge");
  auto req = request("abab0001", RequestState::submitted);
  req.secrets_file = "/home/u/.rv/requests/abab0001/env";
  REQUIRE(store.create(req.id, to_json(req)));
  auto loaded = store.read(req.id);
  REQUIRE(loaded);
  auto racer = request_from_json(*loaded); // rv run -f, racing
  auto other = request_from_json(*loaded); // rv ps in another terminal
  REQUIRE(racer);
  REQUIRE(other);
  other->secrets_file.clear(); // remove_secrets
  save(store, *other);
  racer->winner = "s2";
  racer->state = RequestState::won;
  save(store, *racer);
  auto now = store.read(req.id);
  REQUIRE(now);
  CHECK((*now)["winner"] == "s2");
  CHECK((*now)["state"] == "won");
  CHECK((*now)["secrets_file"] == ""); // before: the racer's stale copy wrote the removed path back
  CHECK(racer->secrets_file.empty());  // and the racer now knows it
  std::filesystem::remove_all(store.dir());
}

// UX review 3, N4: a job that ran the command and crashed within a poll interval was never seen
// running, so no winner was recorded: `rv sync pull` said "no winner yet" and `rv ps` showed no `*`.
TEST_CASE("reap: the sibling that ran the command and ended before any poll saw it running is the winner")
{
  auto store = temp_store("fast-crash");
  std::vector<RequestRecord> reqs = {request("aaaa0010", RequestState::submitted)};
  REQUIRE(store.create(reqs[0].id, to_json(reqs[0])));
  FakeRunner r;
  FakeClock clock;
  // s1 cancelled itself at the gate (it lost); s2 ran the command and failed.
  r.expect(
      [](const auto& a) { return has(a, "squeue"); },
      FakeRunner::reply(0, row("11", "CANCELLED", "", "rv-aaaa0010") + row("12", "FAILED", "v100-1", "rv-aaaa0010")));
  auto report = refresh_and_reap(r, clock, store, reqs);
  REQUIRE(report);
  CHECK(r.all_consumed());
  CHECK(r.unexpected().empty());
  CHECK(report->cancelled.empty());
  CHECK(reqs[0].winner == "s2");
  auto saved = store.read("aaaa0010");
  REQUIRE(saved);
  CHECK((*saved)["winner"] == "s2");
  CHECK((*saved)["state"] == "failed");
  std::filesystem::remove_all(store.dir());
}
