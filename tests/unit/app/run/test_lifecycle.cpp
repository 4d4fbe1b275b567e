// The request lifecycle end to end against a scripted cluster (unit/app/lifecycle_world.hpp):
// submit (with refusals) and the race, and what the record and the secrets file look like on each
// exit path. Every effect comes through an app::Env built from fakes: no cluster, no clock, no
// terminal. Following, retries and rv up: test_lifecycle_follow.cpp.

#include "app/manage/manage.hpp"
#include "app/run/launch/launch.hpp"
#include "app/run/launch/race.hpp"
#include "app/run/launch/submit.hpp"
#include "app/run/pipeline.hpp"
#include "core/interrupt.hpp"
#include "core/ssh/hold_protocol.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

TEST_CASE("lifecycle: a refused strategy is recorded with Slurm's reason, the others are submitted")
{
  World w("refused");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "", "Invalid account or account/partition combination specified");
  expect_sbatch(w.cluster, "102");
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // Each sbatch got its strategy's script on stdin, never in argv.
  REQUIRE(w.cluster.stdin_seen.size() == 3);
  CHECK(w.cluster.stdin_seen[1].find("#SBATCH --partition=\"gpu-a100\"") != std::string::npos);
  CHECK(w.cluster.stdin_seen[2].find("#SBATCH --partition=\"gpu-v100\"") != std::string::npos);
  CHECK(w.cluster.stdin_seen[2].find("python train.py") != std::string::npos);
  const auto& rec = launched->rec;
  CHECK(rec.state == RequestState::submitted);
  CHECK(rec.job_ids() == std::vector<std::string>{"102"});
  CHECK(rec.jobs[0].state == slurm::JobState::unknown);
  CHECK(state_name(rec.jobs[0]) == "REFUSED");
  CHECK(rec.jobs[0].error == "Invalid account or account/partition combination specified");
  CHECK(rec.created_at == "2027-01-15T08:00:00Z"); // the Env's clock, not the wall clock
  auto saved = w.record();
  CHECK(saved["state"] == "submitted");
  CHECK(saved["jobs"][1]["job_id"] == "102");
  CHECK(w.output.stdout_text.find("REFUSED: Invalid account") != std::string::npos);
  CHECK(w.output.stdout_text.find("s2   102") != std::string::npos);
}

TEST_CASE("lifecycle: every strategy refused: exit 3, record failed, the secrets file removed")
{
  World w("all-refused");
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "", "Requested node configuration is not available");
  expect_sbatch(w.cluster, "", "Requested node configuration is not available");
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/"); }, Cluster::ok());
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE_FALSE(launched);
  CHECK(exit_code_for(launched.error().code) == 3);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // The secret went to the cluster on stdin (never argv) before the first sbatch...
  CHECK(w.cluster.stdin_seen[0].find("s3cr3t") != std::string::npos);
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE(mentions(argv, "s3cr3t"));
  }
  // ... and is gone once nothing runs: the record says so.
  auto saved = w.record();
  CHECK(saved["state"] == "failed");
  CHECK(saved["secrets_file"] == "");
  CHECK(saved["secrets"] == nlohmann::json::array({"WANDB_API_KEY"}));
}

// #12: with rv's roots resolved in the discovery round trip, submission is ONE round trip: the
// directories and the secrets first, then every sbatch, each guarded by the marker the first
// command creates last.
TEST_CASE("lifecycle: roots known from discovery: directories, secrets and every sbatch in one round trip")
{
  World w("one-trip");
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  auto planned = two_strategies();
  planned.roots = RemoteRoots{"/home/alice/.rv", "/scratch/alice/rv"};
  expect_prepare(w.cluster, "/home/alice/.rv");
  expect_sbatch(w.cluster, "101");
  expect_sbatch(w.cluster, "102");
  auto launched = submit_request(w.env, planned, "python train.py", "", "run");
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.cluster.batch_sizes == std::vector<std::size_t>{3}); // prepare + 2 sbatch, one batch
  const auto& id = launched->rec.id;
  const auto& prepare = w.cluster.seen[0];
  REQUIRE(prepare.size() == 11);
  CHECK(prepare[3] == "rv-prepare");
  CHECK(prepare[4] == "/home/alice/.rv");   // the resolved root
  CHECK(prepare[5] == "/scratch/alice/rv"); // the resolved cache
  CHECK(prepare[6] == id);                  // the secrets' request
  CHECK(prepare[8] == id);                  // the marker's request
  CHECK(prepare[9] == "python");            // the program, looked up before any sbatch (N7)
  CHECK(prepare[10].empty());               // no venv
  CHECK(w.cluster.stdin_seen[0].find("s3cr3t") != std::string::npos);
  for (std::size_t i = 1; i <= 2; ++i) {
    const auto& g = w.cluster.seen[i];
    REQUIRE(g.size() == 7);
    CHECK(g[3] == "rv-guard");
    CHECK(g[4] == "/home/alice/.rv/requests/" + id + "/prepared");
    CHECK(std::vector<std::string>(g.begin() + 5, g.end()) == std::vector<std::string>{"sbatch", "--parsable"});
    CHECK(w.cluster.stdin_seen[i].find("#SBATCH --output=\"/home/alice/.rv/logs/") != std::string::npos);
    CHECK(w.cluster.stdin_seen[i].find("RV_CACHE_ROOT=/scratch/alice/rv\n") != std::string::npos);
  }
  auto saved = w.record();
  CHECK(saved["state"] == "submitted");
  CHECK(saved["remote_root"] == "/home/alice/.rv");
  CHECK(saved["secrets_file"] == "/home/alice/.rv/requests/" + id + "/env");
  CHECK(launched->paths.cache == "/scratch/alice/rv");
}

// Issue #38 item 7: the job's snapshot is the first command of the submission's batch; the
// preparation (whose marker lets an sbatch run) runs only once it is there.
TEST_CASE("lifecycle: the snapshot leads the submission's batch: snapshot, preparation, every sbatch in one")
{
  World w("snapshot-first");
  auto planned = two_strategies();
  planned.roots = RemoteRoots{"/home/alice/.rv", "/home/alice/.rv/cache"};
  RunExtras extras;
  extras.request_id = "0badcafe";
  extras.snapshot = SnapshotToMake{"/home/alice/.rv/workspaces/p/_default/code",
                                   "/home/alice/.rv/workspaces/p/_default/snapshots", "1800000000-0badcafe"};
  const std::string snapshot = "/home/alice/.rv/workspaces/p/_default/snapshots/1800000000-0badcafe";
  w.cluster.on([](const auto& a) { return has(a, "rv-snapshot"); }, Cluster::ok());
  expect_prepare(w.cluster, "/home/alice/.rv");
  expect_sbatch(w.cluster, "101");
  expect_sbatch(w.cluster, "102");
  auto launched = submit_request(w.env, planned, "python train.py", snapshot, "run", extras);
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.cluster.batch_sizes == std::vector<std::size_t>{4}); // snapshot + prepare + 2 sbatch: one round trip
  const auto& snap = w.cluster.seen.at(0);
  CHECK(std::vector<std::string>(snap.begin() + 3, snap.end()) ==
        std::vector<std::string>{"rv-snapshot", "/home/alice/.rv/workspaces/p/_default/code",
                                 "/home/alice/.rv/workspaces/p/_default/snapshots", "1800000000-0badcafe"});
  const auto& prep = w.cluster.seen.at(1);
  REQUIRE(prep.size() > 8);
  CHECK(prep[3] == "rv-guard"); // the preparation is guarded by the snapshot itself
  CHECK(prep[4] == snapshot);
  CHECK(has(prep, "rv-prepare"));
  CHECK(w.record()["state"] == "submitted");
}

TEST_CASE("lifecycle: a snapshot that fails at the head of the batch: no sbatch ran, one-line error, no record")
{
  World w("snapshot-fails");
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  auto planned = two_strategies();
  planned.roots = RemoteRoots{"/home/alice/.rv", "/home/alice/.rv/cache"};
  RunExtras extras;
  extras.request_id = "0badcafe";
  extras.snapshot = SnapshotToMake{"/w/code", "/w/snapshots", "1800000000-0badcafe"};
  w.cluster.on([](const auto& a) { return has(a, "rv-snapshot"); },
               Cluster::reply(1, "",
                              "cp: cannot create hard link '/w/snapshots/.x.tmp/a': No space left on device\n"
                              "cp: cannot create hard link '/w/snapshots/.x.tmp/b': No space left on device\n"));
  // As the login node answers: the guard finds no snapshot, so no preparation and no marker, and
  // every sbatch's guard refuses.
  w.cluster.on([](const auto& a) { return has(a, "rv-prepare"); },
               Cluster::reply(k_not_prepared, "", "rv: not submitted: rv's directories were not prepared\n"));
  for (int i = 0; i < 2; ++i) {
    w.cluster.on([](const auto& a) { return has(a, "sbatch"); },
                 Cluster::reply(k_not_prepared, "", "rv: not submitted: rv's directories were not prepared\n"));
  }
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/"); }, Cluster::ok());
  auto launched = submit_request(w.env, planned, "python train.py", "/w/snapshots/1800000000-0badcafe", "run", extras);
  REQUIRE_FALSE(launched);
  CHECK(launched.error().message ==
        "cannot snapshot /w/code on scripted: cp: cannot create hard link '/w/snapshots/.x.tmp/a': No space left on "
        "device");
  CHECK(launched.error().message.find('\n') == std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.cluster.batch_sizes.front() == 4);
  // Nothing was submitted, nothing is tracked, and nothing is left: no record, the secrets removed.
  for (const auto& a : w.cluster.seen) {
    CHECK_FALSE(has(a, "scancel"));
  }
  auto all = w.requests.list();
  REQUIRE(all);
  CHECK(all->empty());
}

namespace {

// The submission's one round trip fails its preparation (disk quota): the guard refuses every
// sbatch. `rm_ok`: whether the secrets file's removal afterwards succeeds.
Result<Launched> submit_with_failed_directories(World& w, bool rm_ok)
{
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  auto planned = two_strategies();
  planned.roots = RemoteRoots{"/home/alice/.rv", "/home/alice/.rv/cache"};
  w.cluster.on([](const auto& a) { return has(a, "rv-prepare"); },
               Cluster::reply(1, "", "mkdir: cannot create directory '/home/alice/.rv': Disk quota exceeded\n"));
  for (int i = 0; i < 2; ++i) { // the guard refuses both
    w.cluster.on([](const auto& a) { return has(a, "rv-guard"); },
                 Cluster::reply(k_not_prepared, "", "rv: not submitted: rv's directories were not prepared\n"));
  }
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/"); },
               rm_ok ? Cluster::ok() : Cluster::reply(1, "", "rm: cannot remove: Stale file handle\n"));
  return submit_request(w.env, planned, "python train.py", "", "run");
}

} // namespace

TEST_CASE("lifecycle: one round trip whose directories fail: no sbatch ran, secrets removed, no record left (N11)")
{
  World w("one-trip-fail");
  auto launched = submit_with_failed_directories(w, true);
  REQUIRE_FALSE(launched);
  CHECK(launched.error().code == ErrorCode::io);
  CHECK(launched.error().message.find("cannot create rv's directories under /home/alice/.rv on scripted: mkdir: "
                                      "cannot create directory") != std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // Nothing reached Slurm: `rv ps -a` has nothing to show (the review's `failed pwd` line).
  auto all = w.requests.list();
  REQUIRE(all);
  CHECK(all->empty());
}

TEST_CASE("lifecycle: directories fail and the secrets cannot be removed: the record stays, failed, naming the file")
{
  World w("one-trip-fail-rm");
  auto launched = submit_with_failed_directories(w, false);
  REQUIRE_FALSE(launched);
  CHECK(w.cluster.done());
  auto saved = w.record(); // rv ps retries the removal from it
  CHECK(saved["state"] == "failed");
  CHECK(saved["secrets_file"] == "/home/alice/.rv/requests/" + saved["id"].get<std::string>() + "/env");
  for (const auto& j : saved["jobs"]) {
    CHECK(j.value("job_id", "") == "");
  }
}

TEST_CASE("lifecycle: Ctrl-C during submission: the jobs sbatch created are found and cancelled")
{
  World w("ctrl-c-submit");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  auto planned = two_strategies();
  RunExtras extras;
  extras.request_id = "c0ffee01";
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "201");
  w.cluster.on([](const auto& a) { return has(a, "sbatch"); },
               Error{ErrorCode::interrupted, "interrupted by signal 2", ""});
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("201|PENDING|rv:c0ffee01|train\n777|RUNNING|(null)|train\n"));
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "201"};
      },
      Cluster::ok());
  // The second search, after the settle gap, finds nothing new.
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("201|CANCELLED|rv:c0ffee01|train\n"));
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/c0ffee01/env"); }, Cluster::ok());
  auto launched = submit_request(w.env, planned, "python train.py", "", "run", extras);
  REQUIRE_FALSE(launched);
  CHECK(launched.error().code == ErrorCode::interrupted);
  CHECK(launched.error().message.find("cancelled 201 that sbatch had already created") != std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "cancelled");
  CHECK(saved["secrets_file"] == "");
  bool found = false;
  for (const auto& j : saved["jobs"]) {
    if (j["job_id"] == "201") {
      found = true;
      CHECK(j["state"] == "CANCELLED");
    }
    CHECK(j["job_id"] != "777"); // the user's unrelated job of the same name
  }
  CHECK(found);
}

// S2 (security-review-3): the one-trip submission batch reached the login node, then the held
// connection ended before its answer came back. The runner never sends it again (every sbatch may
// have run); submit treats it as a failed submission: the jobs are found by their comment and
// cancelled, and the error says the batch may have run.
TEST_CASE("lifecycle: the submission batch's answer was lost after it was sent: sent once, its jobs found and "
          "cancelled")
{
  World w("answer-lost");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  auto planned = two_strategies();
  planned.roots = RemoteRoots{"/home/alice/.rv", "/home/alice/.rv/cache"};
  RunExtras extras;
  extras.request_id = "c0ffee04";
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "101");
  expect_sbatch(w.cluster, "102");
  w.cluster.lose_next_batch_answer = proc::hold::answer_lost("alice@login:22");
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("101|PENDING|rv:c0ffee04|train\n102|PENDING|rv:c0ffee04|train\n"));
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "101", "102"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("101|CANCELLED|rv:c0ffee04|train\n102|CANCELLED|rv:c0ffee04|train\n"));
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/c0ffee04/env"); }, Cluster::ok());
  auto launched = submit_request(w.env, planned, "python train.py", "", "run", extras);
  REQUIRE_FALSE(launched);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(std::count_if(w.cluster.seen.begin(), w.cluster.seen.end(), [](const auto& a) { return has(a, "sbatch"); }) ==
        2); // each sbatch once: the batch was not sent again
  CHECK(exit_code_for(launched.error().code) == 255);
  CHECK(launched.error().message.find("it may have run") != std::string::npos);
  CHECK(launched.error().message.find("(request c0ffee04: cancelled 101 102 that sbatch had already created)") !=
        std::string::npos);
  auto saved = w.record();
  CHECK(saved["state"] == "failed");
  CHECK(saved["secrets_file"] == "");
  int cancelled = 0;
  for (const auto& j : saved["jobs"]) {
    cancelled += j.value("job_id", "") != "" && j["state"] == "CANCELLED" ? 1 : 0;
  }
  CHECK(cancelled == 2);
}

// N3: an sbatch killed by its 60 s timeout (an overloaded slurmctld) may have created its job. In a
// batch where another sbatch answered, that job was recorded REFUSED and never looked for; it then
// claimed the request and ran untracked.
TEST_CASE("lifecycle: an sbatch killed by its timeout in a good batch: its job is found by comment and tracked")
{
  World w("sbatch-timeout");
  RunExtras extras;
  extras.request_id = "c0ffee02";
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "201");
  w.cluster.on([](const auto& a) { return has(a, "sbatch"); }, Cluster::reply(124));
  for (int i = 0; i < 2; ++i) { // the second search, after the settle gap, finds nothing new
    w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
                 Cluster::ok("201|PENDING|rv:c0ffee02|train\n202|PENDING|rv:c0ffee02|train\n"));
  }
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run", extras);
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  const auto& rec = launched->rec;
  CHECK(rec.state == RequestState::submitted);
  CHECK(rec.job_ids() == std::vector<std::string>{"201", "202"});
  REQUIRE(rec.jobs.size() == 2); // the job went to the strategy whose answer was lost
  CHECK(rec.jobs[1].state == slurm::JobState::pending);
  CHECK(rec.jobs[1].error.empty());
  CHECK(w.record()["jobs"][1]["job_id"] == "202");
}

TEST_CASE("lifecycle: every sbatch timed out: the jobs they created anyway are found and cancelled, request failed")
{
  World w("sbatch-timeout-all");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  RunExtras extras;
  extras.request_id = "c0ffee03";
  expect_prepare(w.cluster);
  w.cluster.on([](const auto& a) { return has(a, "sbatch"); }, Cluster::reply(124));
  w.cluster.on([](const auto& a) { return has(a, "sbatch"); }, Cluster::reply(137));
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("301|PENDING|rv:c0ffee03|train\n"));
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "301"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("301|CANCELLED|rv:c0ffee03|train\n"));
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/c0ffee03/env"); }, Cluster::ok());
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run", extras);
  REQUIRE_FALSE(launched);
  CHECK(exit_code_for(launched.error().code) == 3);
  CHECK(launched.error().message.find("cancelled 301 that sbatch had already created") != std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "failed");
  CHECK(saved["secrets_file"] == "");
}

TEST_CASE("lifecycle: rv run -f: the first to start wins, the sibling is cancelled, the output streams, exit 0")
{
  World w("winner");
  auto planned = two_strategies();
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "301");
  expect_sbatch(w.cluster, "302");
  // The race: s2 starts first and holds the in-job claim.
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "301,302"); },
               Cluster::ok(squeue_row("301", "PENDING", "") + squeue_row("302", "RUNNING", "v100-1")));
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::ok("302\n"));
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "301"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1)); // type check
  // Following s2: its output, then squeue says it ended, the last output, the final state.
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, "train-302.out"); }, Cluster::ok("epoch 1\n"));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, "train-302.err"); }, Cluster::ok("warn\n"));
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "302"); },
               Cluster::ok(squeue_row("302", "COMPLETED", "v100-1")));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, ".out"); }, Cluster::ok("done\n"));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, ".err"); }, Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "302"); },
               Cluster::ok(scontrol_job("302", "COMPLETED", "0:0")));
  w.cluster.on([](const auto& a) { return has(a, "sacct"); }, Cluster::ok());
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.302"); }, Cluster::reply(1));
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.output.stdout_text.find("epoch 1\ndone\n") != std::string::npos);
  // rv's status line (no terminal: the wait in one line, docs/events.md), then the job's stderr.
  CHECK(w.output.stderr_text.ends_with("waiting for the first of 2 strategies to start\nwarn\n"));
  auto saved = w.record();
  CHECK(saved["winner"] == "s2");
  CHECK(saved["state"] == "done");
  CHECK(saved["jobs"][1]["state"] == "COMPLETED");
  CHECK(saved["jobs"][0]["state"] == "CANCELLED");
}

TEST_CASE("lifecycle: Ctrl-C during the race cancels every sibling and records the request cancelled")
{
  World w("ctrl-c-race");
  auto planned = two_strategies();
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "401");
  expect_sbatch(w.cluster, "402");
  w.cluster.on(
      [](const auto& a) {
        if (!has(a, "squeue")) {
          return false;
        }
        rv::raise_interrupt(2); // Ctrl-C while both are pending
        return true;
      },
      Cluster::ok(squeue_row("401", "PENDING", "") + squeue_row("402", "PENDING", "")));
  // The first poll reads the claim with squeue, in its round trip: none yet.
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::reply(1));
  w.cluster.on(
      [](const auto& a) { return has(a, "scancel") && has(a, "--name=train") && has(a, "401") && has(a, "402"); },
      Cluster::ok());
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  rv::clear_interrupt();
  REQUIRE_FALSE(rc);
  CHECK(rc.error().code == ErrorCode::interrupted);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "cancelled");
}

TEST_CASE("lifecycle: a tie (both start in one poll) goes to the claim holder, rv cancels the other")
{
  World w("tie");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "501");
  expect_sbatch(w.cluster, "502");
  expect_win(w.cluster, "501,502", squeue_row("501", "RUNNING", "a100-1") + squeue_row("502", "RUNNING", "v100-1"),
             "501");
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "502"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE(launched);
  auto winner = race_request(w.env, *launched);
  REQUIRE_MESSAGE(winner, winner.error().message);
  CHECK(winner->strategy_id == "s1");
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["winner"] == "s1");
  CHECK(saved["jobs"][1]["state"] == "CANCELLED");
}

TEST_CASE("lifecycle: a sibling that left squeue is read from scontrol, then sacct, the other wins later")
{
  World w("vanished");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "601");
  expect_sbatch(w.cluster, "602");
  // 601 is gone from squeue and from the controller: accounting says it was cancelled (by an
  // admin) before it ever started. (A sibling that started and failed would be the winner: the
  // command ran there, once.)
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "601,602"); },
               Cluster::ok(squeue_row("602", "PENDING", "")));
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::reply(1));
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "601"); },
               Cluster::reply(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  w.cluster.on(
      [](const auto& a) { return has(a, "sacct") && has(a, "601"); },
      Cluster::ok("601|CANCELLED by 0|0:0|00:00:00|None|2026-11-22T05:00:03|None assigned|billing=1|gpu-a100|train\n"));
  // The next poll asks about 601 again (squeue does not know it; the controller has forgotten it),
  // and finds 602 running with the claim.
  // The wait on the login node leads that poll's batch, and the claim is read with squeue.
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "601,602"); },
               Cluster::ok(squeue_row("602", "RUNNING", "v100-1")));
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::ok("602\n"));
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "601"); }, Cluster::reply(1));
  w.cluster.on(
      [](const auto& a) { return has(a, "sacct") && has(a, "601"); },
      Cluster::ok("601|CANCELLED by 0|0:0|00:00:00|None|2026-11-22T05:00:03|None assigned|billing=1|gpu-a100|train\n"));
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE(launched);
  auto winner = race_request(w.env, *launched);
  REQUIRE_MESSAGE(winner, winner.error().message);
  CHECK(winner->job_id == "602");
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["jobs"][0]["state"] == "CANCELLED");
  CHECK(saved["winner"] == "s2");
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE(has(argv, "scancel")); // nothing left to cancel
  }
}

TEST_CASE("lifecycle: every sibling ends without starting: exit 3 with each reason, record failed, secrets gone")
{
  World w("hopeless");
  REQUIRE(w.secrets.set({{"TOKEN", "t"}}));
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "701");
  expect_sbatch(w.cluster, "702");
  w.cluster.on([](const auto& a) { return has(a, "squeue"); },
               Cluster::ok(squeue_row("701", "CANCELLED", "", "0:00") + squeue_row("702", "FAILED", "", "0:00")));
  // 701 was cancelled unstarted, not by rv: the race reads the claim once before it gives up (N3).
  w.cluster.on([](const auto& a) { return mentions(a, "/claim/owner"); },
               Cluster::reply(1, "", "cat: owner: No such file or directory\n"));
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/env"); }, Cluster::ok());
  auto rc = launch_run(w.env, two_strategies(), {"python train.py"}, "", true);
  REQUIRE_FALSE(rc);
  CHECK(exit_code_for(rc.error().code) == 3);
  CHECK(rc.error().message.find("s1 (701): CANCELLED") != std::string::npos);
  CHECK(rc.error().message.find("s2 (702): FAILED") != std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "failed");
  CHECK(saved["secrets_file"] == "");
}

// #15 campaign (seed 1125, run 39): the connection dropped at the race's first poll, so its scancel
// could not run either; the record said `failed` while four jobs were still queued, and neither
// `rv ps` nor `rv stop` looked at them again.
TEST_CASE("lifecycle: a race whose cancel cannot run leaves the request live for rv ps and rv stop")
{
  World w("race-lost");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  auto planned = two_strategies();
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "501");
  expect_sbatch(w.cluster, "502");
  const Error lost{ErrorCode::unreachable, "connection lost", ""};
  w.cluster.on([](const auto& a) { return has(a, "squeue"); }, lost);
  w.cluster.on([](const auto& a) { return has(a, "scancel"); }, lost);
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  REQUIRE_FALSE(rc);
  CHECK(rc.error().message.find("`rv stop " + w.record()["id"].get<std::string>() + "` cancels them") !=
        std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "submitted"); // live: not a final state
  CHECK(saved["jobs"][0]["state"] == "PENDING");
  CHECK(saved["secrets_file"] != ""); // a job may still start and need it
}

TEST_CASE("lifecycle: --container reaches every strategy's script, and the login node does not look for the program")
{
  World w("container");
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  auto planned = two_strategies();
  model::ContainerOrder order{{model::ImageKind::docker, "docker://nvcr.io/nvidia/pytorch:24.05-py3"}, {}};
  planned.request.container = order;
  planned.container = templates::ContainerRun{order, {model::ContainerRuntime::apptainer, "apptainer", "test"}, false};
  planned.roots = RemoteRoots{"/home/alice/.rv", "/scratch/alice/rv"}; // one round trip: the program check rides along
  expect_prepare(w.cluster, "/home/alice/.rv");
  expect_sbatch(w.cluster, "101");
  expect_sbatch(w.cluster, "102");
  auto launched = submit_request(w.env, planned, "python train.py", "", "run");
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(w.cluster.unexpected.empty());
  REQUIRE(w.cluster.stdin_seen.size() == 3);
  for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    CHECK(w.cluster.stdin_seen[i].find("_rv_ct bash -c \"$RV_COMMAND\"") != std::string::npos);
    CHECK(w.cluster.stdin_seen[i].find("_rv_ct_pull") != std::string::npos);
    CHECK(w.cluster.stdin_seen[i].find("s3cr3t") == std::string::npos);
  }
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE(mentions(argv, "s3cr3t"));
  }
  REQUIRE(w.cluster.seen[0].size() == 11);
  CHECK(w.cluster.seen[0][3] == "rv-prepare");
  CHECK(w.cluster.seen[0][9].empty()); // the image's python, not the login node's: not looked up
  // The record keeps the container as typed (a re-plan reads it back through the same grammar).
  auto saved = w.record();
  CHECK(saved["options"]["container"]["image"] == "docker://nvcr.io/nvidia/pytorch:24.05-py3");
  auto back = request_options_from_json(saved["options"]);
  REQUIRE(back.has_value());
  REQUIRE(back->container.has_value());
  CHECK(back->container->image.text == "docker://nvcr.io/nvidia/pytorch:24.05-py3");
}

TEST_CASE("lifecycle: --dry-run shows the container's runtime and step")
{
  World w("container-dry");
  auto planned = two_strategies();
  model::ContainerOrder order{{model::ImageKind::docker, "docker://nvcr.io/nvidia/pytorch:24.05-py3"}, {}};
  planned.container =
      templates::ContainerRun{order, {model::ContainerRuntime::pyxis, "", "found by discovery (srun --help)"}, false};
  planned.cluster.containers.probed = true;
  planned.cluster.containers.pyxis = true;
  planned.cluster.containers.pyxis_evidence = "srun --help";
  print_plan(w.output, planned, false, false);
  CHECK(w.output.stdout_text.find("container docker://nvcr.io/nvidia/pytorch:24.05-py3 with pyxis (found by "
                                  "discovery (srun --help); the cluster offers pyxis (srun --help))\n") !=
        std::string::npos);
  CHECK(w.output.stdout_text.find("  step: srun --container-image=nvcr.io#nvidia/pytorch:24.05-py3 "
                                  "--container-name=rv-REQUEST-JOB "
                                  "--container-mounts=WORKDIR:WORKDIR,SCRATCH:SCRATCH,RV_ROOT:RV_ROOT "
                                  "--container-workdir=WORKDIR bash -c \"$RV_COMMAND\"\n") != std::string::npos);
  w.output.stdout_text.clear();
  print_plan(w.output, planned, true, false);
  auto doc = nlohmann::json::parse(w.output.stdout_text);
  CHECK(doc["container"]["runtime"] == "pyxis");
  CHECK(doc["container"]["image"] == "docker://nvcr.io/nvidia/pytorch:24.05-py3");
}

TEST_CASE("lifecycle: --notify with nothing configured fails before anything is planned, synced or queued")
{
  World w("notify-early");
  JobOrder order;
  order.request = templates::testing::base_request();
  order.notify = true;
  auto r = run_command(w.env, order, {"python3", "train.py"}, false);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::config);
  CHECK(r.error().message.find("no address") != std::string::npos);
  CHECK(w.cluster.seen.empty()); // no discovery, no sync, no sbatch
  CHECK(w.local.seen.empty());   // no rsync either
  CHECK(w.requests.list()->empty());

  // A task file's secret that is not set: the same, for rv up too.
  JobOrder up;
  up.request = order.request;
  up.secrets = std::vector<std::string>{"WANDB_API_KEY"};
  auto u = bring_up(w.env, up, "");
  REQUIRE_FALSE(u);
  CHECK(u.error().message.find("WANDB_API_KEY") != std::string::npos);
  CHECK(w.cluster.seen.empty());
}
