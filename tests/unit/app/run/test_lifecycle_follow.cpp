// The request lifecycle after the race, against a scripted cluster (unit/app/lifecycle_world.hpp):
// following the winner, Ctrl-C after the start, checkpoint segments, the hardware retry, the
// record before the secrets, and acting only on a request's own host (rv up: test_up.cpp).

#include "app/manage/manage.hpp"
#include "app/request/lookup.hpp"
#include "app/run/launch/launch.hpp"
#include "app/run/launch/race.hpp"
#include "app/run/launch/submit.hpp"
#include "core/interrupt.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

TEST_CASE("lifecycle: Ctrl-C after the start stops following, the job keeps running and stays tracked")
{
  World w("ctrl-c-follow");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "801");
  expect_sbatch(w.cluster, "802");
  expect_win(w.cluster, "801,802", squeue_row("801", "RUNNING", "a100-1") + squeue_row("802", "PENDING", ""), "801");
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "802"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, ".out"); }, Cluster::ok("step 1\n"));
  w.cluster.on(
      [](const auto& a) {
        rv::raise_interrupt(2); // Ctrl-C while the job runs
        return has(a, "tail") && mentions(a, ".err");
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "801"); },
               Cluster::ok(squeue_row("801", "RUNNING", "a100-1")));
  auto rc = launch_run(w.env, two_strategies(), {"python train.py"}, "", true);
  rv::clear_interrupt();
  REQUIRE_FALSE(rc);
  CHECK(rc.error().code == ErrorCode::interrupted);
  CHECK(rc.error().message.find("job 801 keeps running") != std::string::npos);
  // stdout is the program's alone (`rv run -f ... > out` keeps it clean: N3); the table is on stderr.
  CHECK(w.output.stdout_text == "step 1\n");
  CHECK(w.output.stderr_text.find("request " + w.record()["id"].get<std::string>() +
                                  " (train): 2 strategies on scripted\n  s1   801        \n  s2   802        \n") !=
        std::string::npos);
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE((has(argv, "scancel") && has(argv, "801"))); // the winner is never cancelled
  }
  auto saved = w.record();
  CHECK(saved["state"] == "won");
  CHECK(saved["jobs"][0]["state"] == "RUNNING");
}

TEST_CASE("lifecycle: a checkpoint segment that resubmitted itself is followed, and the record moves on")
{
  World w("segments");
  auto planned = two_strategies();
  planned.plan.strategies.resize(1);
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "901");
  expect_win(w.cluster, "901", squeue_row("901", "RUNNING", "a100-1"), "901");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  expect_follow(w.cluster, "901", "COMPLETED", "0:0", "segment 1\n");
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.901"); }, Cluster::ok("905\n"));
  expect_follow(w.cluster, "905", "COMPLETED", "0:0", "segment 2\n");
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.905"); }, Cluster::reply(1));
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.output.stdout_text.find("segment 1\nsegment 2\n") != std::string::npos);
  auto saved = w.record();
  CHECK(saved["jobs"][0]["job_id"] == "905");
  CHECK(saved["jobs"][0]["earlier_segments"] == nlohmann::json::array({"901"}));
  CHECK(saved["state"] == "done");
}

TEST_CASE("lifecycle: a GPU fault right after the start is retried as a new request without the node")
{
  World w("hardware-retry");
  // Discovery and probes for the re-plan come from the fallback: two idle a100 nodes.
  w.cluster.fallback = [](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
    auto is = [&](std::initializer_list<const char*> words) {
      std::size_t i = 0;
      for (const char* word : words) {
        if (i >= a.size() || a[i] != word) {
          return false;
        }
        ++i;
      }
      return true;
    };
    if (is({"sinfo"})) {
      return Cluster::ok(
          "a100-1|gpu-a100|idle|64|0/64/0/64|512000|0|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|a100|none\n"
          "a100-2|gpu-a100|idle|64|0/64/0/64|512000|0|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|a100|none\n");
    }
    if (is({"scontrol", "-o", "show", "partition"})) {
      return Cluster::ok("PartitionName=gpu-a100 AllowAccounts=ALL AllowQos=ALL Default=YES QoS=N/A MaxNodes=2 "
                         "MaxTime=2-00:00:00 Nodes=a100-[1-2] State=UP TRES=cpu=128,gres/gpu=8\n");
    }
    if (is({"scontrol", "-d", "-o", "show", "node"})) {
      return Cluster::ok("NodeName=a100-1 CPUAlloc=0 CPUTot=64 Gres=gpu:a100:4(S:0-1) RealMemory=512000 AllocMem=0 "
                         "State=IDLE Partitions=gpu-a100\n"
                         "NodeName=a100-2 CPUAlloc=0 CPUTot=64 Gres=gpu:a100:4(S:0-1) RealMemory=512000 AllocMem=0 "
                         "State=IDLE Partitions=gpu-a100\n");
    }
    if (is({"scontrol", "show", "config"})) {
      return Cluster::ok("ClusterName = rvtest\nSLURM_VERSION = 22.05.8\n");
    }
    if (is({"date"})) {
      return Cluster::ok("+0000 UTC\n");
    }
    if (is({"readlink"})) {
      return Cluster::ok("/usr/share/zoneinfo/UTC\n");
    }
    if (is({"sh", "-c"}) && a.size() > 3 && a[3] == "rv-resolve") {
      return Cluster::ok(std::string("/home/alice/.rv\0", 16)); // rv's root: the retry submits in one round trip
    }
    if (is({"env", "SLURM_TIME_FORMAT=standard", "squeue"})) {
      return Cluster::ok(""); // the queue for the window model: empty
    }
    if (a.size() == 4 && a[3] == "rv-probe") {
      return Cluster::ok(""); // probes: no answers, waits unknown
    }
    if (a.size() == 4 && a[3] == "rv-containers") {
      return Cluster::ok(""); // no container runtime
    }
    return std::nullopt;
  };
  auto planned = two_strategies();
  planned.plan.strategies.resize(1);
  planned.request.gpus = 1; // the re-plan: one shape (1x1) on the two a100 nodes
  // Try 1: a100-1's GPU falls off the bus 3 s after the start.
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1001");
  expect_win(w.cluster, "1001", squeue_row("1001", "RUNNING", "a100-1"), "1001");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  expect_follow(w.cluster, "1001", "FAILED", "1:0", "", "RuntimeError: CUDA error\n");
  w.cluster.on([](const auto& a) { return a.front() == "sh" && has(a, "rv-fault"); },
               Cluster::ok("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"));
  // Try 2, re-planned without a100-1: a new request.
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1002");
  expect_win(w.cluster, "1002", squeue_row("1002", "RUNNING", "a100-2"), "1002");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  expect_follow(w.cluster, "1002", "COMPLETED", "0:0", "trained\n");
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.1002"); }, Cluster::reply(1));
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // The second submission excluded the faulty node.
  std::vector<std::string> scripts;
  for (std::size_t i = 0; i < w.cluster.seen.size(); ++i) {
    if (has(w.cluster.seen[i], "sbatch")) {
      scripts.push_back(w.cluster.stdin_seen[i]);
    }
  }
  REQUIRE(scripts.size() == 2);
  CHECK(scripts[0].find("--exclude") == std::string::npos);
  CHECK(scripts[1].find("#SBATCH --exclude=\"a100-1\"") != std::string::npos);
  auto all = w.requests.list();
  REQUIRE(all);
  CHECK(all->size() == 2); // two requests: the failed try and the retry
}

// #15 defect 6: the secrets file is never written before the record that owns it is on disk.
TEST_CASE("lifecycle: the record (naming the secrets file) is on disk before the secrets reach the cluster")
{
  World w("secrets-order");
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  bool record_first = false;
  w.cluster.on(
      [&](const auto& a) {
        if (!has(a, "rv-prepare")) {
          return false;
        }
        auto all = w.requests.list();
        record_first = all && all->size() == 1 && (*all)[0]["secrets_file"] == "~/.rv/requests/0badc0de/env";
        return true;
      },
      Cluster::ok("/home/alice/.rv\n/home/alice/.rv/cache\n"));
  expect_sbatch(w.cluster, "1101");
  expect_sbatch(w.cluster, "1102");
  RunExtras extras;
  extras.request_id = "0badc0de";
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run", extras);
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(record_first);
  CHECK(w.cluster.stdin_seen[0].find("s3cr3t") != std::string::npos);
  CHECK(w.record()["secrets_file"] == "/home/alice/.rv/requests/0badc0de/env"); // resolved once known
}

TEST_CASE("lifecycle: a record that cannot be written stops everything before the cluster sees a byte")
{
  World w("unwritable");
  REQUIRE(w.secrets.set({{"TOKEN", "t"}}));
  std::filesystem::create_directories(w.dir);
  std::ofstream(w.dir / "blocker") << "a file where the store's directory should be";
  store::RecordStore blocked(w.dir / "blocker" / "requests");
  Env env{w.cluster, w.local, w.clock, blocked, w.secrets, w.settings, w.output, false, 0, "/home/alice", w.dir};
  auto launched = submit_request(env, two_strategies(), "python train.py", "", "run");
  REQUIRE_FALSE(launched);
  CHECK(w.cluster.seen.empty()); // no secrets written, nothing submitted
}

TEST_CASE("lifecycle: a tie with no claim seen: rv waits for the claim, then the better rank wins")
{
  World w("tie-rank");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1201");
  expect_sbatch(w.cluster, "1202");
  // Both run from the same poll on; the in-job claim never shows (an old guard, a slow file system).
  int polls = 0;
  w.cluster.fallback = [&](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
    if (has(a, "squeue")) {
      ++polls;
      return Cluster::ok(squeue_row("1201", "RUNNING", "a100-1") + squeue_row("1202", "RUNNING", "v100-1"));
    }
    if (a.front() == "cat" && mentions(a, "/claim/owner")) {
      return Cluster::reply(1, "", "No such file or directory\n");
    }
    return std::nullopt;
  };
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--me", "--name=train", "1202"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE(launched);
  auto winner = race_request(w.env, *launched);
  REQUIRE_MESSAGE(winner, winner.error().message);
  CHECK(winner->strategy_id == "s1"); // rank 1 beats rank 2 at the same start
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(polls >= 25); // it waited for the claim (~30 s of the fake clock) before deciding
  CHECK(w.clock.slept_ms() + w.cluster.waited_ms >= 29'000); // here or on the login node
  CHECK(w.cluster.waited_ms >= 25'000);                      // the claim was waited for there
  auto saved = w.record();
  CHECK(saved["winner"] == "s1");
  CHECK(saved["jobs"][1]["state"] == "CANCELLED");
}

TEST_CASE("lifecycle: rv stop and rv logs act only on the host a request was submitted on")
{
  World w("other-host");
  auto req =
      request_from_json(nlohmann::json{{"id", "a1a1a1a1"},
                                       {"host", "ssh alice@cluster-a:22"},
                                       {"name", "train"},
                                       {"state", "submitted"},
                                       {"created_at", "2026-11-22T05:00:00Z"},
                                       {"jobs", {{{"strategy_id", "s1"}, {"job_id", "971"}, {"state", "PENDING"}}}}});
  REQUIRE(req);
  REQUIRE(w.requests.create(req->id, to_json(*req)));
  std::vector<RequestRecord> targets = {*req};
  auto stopped = stop_requests(w.env, targets);
  REQUIRE_FALSE(stopped);
  CHECK(stopped.error().message ==
        "request a1a1a1a1 was submitted on ssh alice@cluster-a:22, but rv is connected to scripted");
  CHECK(stopped.error().hint.find("someone else's job") != std::string::npos);
  auto logs = show_logs(w.env, {"a1a1a1a1", false, false, -1, -1});
  REQUIRE_FALSE(logs);
  CHECK(logs.error().message.find("was submitted on ssh alice@cluster-a:22") != std::string::npos);
  auto listed = list_requests(w.env, true);
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().jobs[0].state == slurm::JobState::pending); // shown as last known, not polled here
  CHECK(w.cluster.seen.empty());                                    // not one command reached the other cluster
}

// UX review 3, N10: `rv ps` on a cluster it could not ask (a second factor with no terminal, a
// dropped link) printed nothing and failed, though the records are here.
TEST_CASE("lifecycle: rv ps shows the records as last known when the cluster cannot be asked")
{
  World w("ps-unreachable");
  auto req =
      request_from_json(nlohmann::json{{"id", "b2b2b2b2"},
                                       {"host", "scripted"},
                                       {"name", "train"},
                                       {"state", "submitted"},
                                       {"created_at", "2026-11-22T05:00:00Z"},
                                       {"jobs", {{{"strategy_id", "s1"}, {"job_id", "972"}, {"state", "PENDING"}}}}});
  REQUIRE(req);
  REQUIRE(w.requests.create(req->id, to_json(*req)));
  w.cluster.on([](const auto& a) { return has(a, "squeue"); },
               Error{ErrorCode::auth_failed, "ssh alice@login:22: the host asks for a second factor", ""});
  auto listed = list_requests(w.env, false);
  REQUIRE_MESSAGE(listed, listed.error().message);
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().id == "b2b2b2b2");
  CHECK(listed->front().jobs[0].state == slurm::JobState::pending);
  CHECK(w.cluster.done()); // it asked, once
  rv::raise_interrupt(2);  // an interrupt is not turned into a stale listing
  w.cluster.on([](const auto& a) { return has(a, "squeue"); }, Error{ErrorCode::interrupted, "interrupted", ""});
  auto stopped = list_requests(w.env, false);
  rv::clear_interrupt();
  REQUIRE_FALSE(stopped);
  CHECK(stopped.error().code == ErrorCode::interrupted);
}
