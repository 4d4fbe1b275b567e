// N15: a finished request's directory on the cluster (claim, markers, watchdog samples up to 2 x 1000
// lines per node) and its logs stayed forever; thousands of requests filled small home quotas.

#include "app/request/prune_requests.hpp"
#include "core/process/local_runner.hpp"
#include "core/utc_time.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
namespace fs = std::filesystem;

namespace {

RequestRecord finished(const std::string& root, const std::string& id, const std::string& created)
{
  RequestRecord r;
  r.id = id;
  r.name = "train";
  r.created_at = created;
  r.remote_root = root;
  r.log_dir = root + "/logs";
  r.state = RequestState::done;
  JobRecord j;
  j.strategy_id = "s1";
  j.job_id = id == "aaaa0001" ? "501" : "502";
  j.state = slurm::JobState::completed;
  r.jobs.push_back(j);
  return r;
}

} // namespace

TEST_CASE("prune requests: only finished requests past request_keep, with paths rv vouches for")
{
  const std::int64_t now = *parse_utc_iso("2027-01-15T08:00:00Z");
  CHECK(now == 1800000000);
  CHECK_FALSE(parse_utc_iso("yesterday"));
  const std::int64_t day = 86400;
  auto old = finished("/home/u/.rv", "aaaa0001", "2026-11-01T00:00:00Z");
  CHECK(prunable(old, now, 30 * day));
  CHECK_FALSE(prunable(old, now, 0));         // request_keep 0: kept forever
  CHECK_FALSE(prunable(old, now, 120 * day)); // not old enough
  auto running = old;
  running.state = RequestState::won;
  running.jobs[0].state = slurm::JobState::running;
  CHECK_FALSE(prunable(running, now, 30 * day));
  auto pruned = old;
  pruned.pruned_at = "2026-12-20T00:00:00Z";
  CHECK_FALSE(prunable(pruned, now, 30 * day));
  auto relative = old;
  relative.remote_root = "~/.rv";
  CHECK_FALSE(prunable(relative, now, 30 * day));
  auto odd = old;
  odd.id = "../x";
  CHECK_FALSE(prunable(odd, now, 30 * day));
}

TEST_CASE("prune requests: the command removes the request's directory and its jobs' logs, nothing else")
{
  const auto base = fs::temp_directory_path() / fmt::format("rv-prune-{}", ::getpid());
  fs::remove_all(base);
  const auto root = (base / "rv").string();
  for (const auto* f : {"requests/aaaa0001/claim/owner", "requests/aaaa0001/watchdog/n1.samples",
                        "requests/bbbb0002/env", "logs/train-501.out", "logs/train-501.err", "logs/train-501.node1.out",
                        "logs/train-502.out", "logs/other-501.out"}) {
    fs::create_directories((base / "rv" / f).parent_path());
    std::ofstream(base / "rv" / f) << "x\n";
  }
  auto a = finished(root, "aaaa0001", "2026-11-01T00:00:00Z");
  proc::LocalRunner local;
  auto o = local.run(prune_command({&a}));
  REQUIRE(o);
  CHECK(o->ok());
  CHECK_FALSE(fs::exists(base / "rv/requests/aaaa0001"));
  CHECK_FALSE(fs::exists(base / "rv/logs/train-501.out"));
  CHECK_FALSE(fs::exists(base / "rv/logs/train-501.err"));
  CHECK_FALSE(fs::exists(base / "rv/logs/train-501.node1.out"));
  CHECK(fs::exists(base / "rv/requests/bbbb0002/env")); // another request's
  CHECK(fs::exists(base / "rv/logs/train-502.out"));
  CHECK(fs::exists(base / "rv/logs/other-501.out"));
  fs::remove_all(base);
}

TEST_CASE("prune requests: a pruned request's settle log goes with it, another request's stays")
{
  const auto base = fs::temp_directory_path() / fmt::format("rv-prune-settle-{}", ::getpid());
  fs::remove_all(base);
  store::RecordStore store(base / "requests");
  auto old = finished("/home/u/rv", "aaaa0001", "2026-11-01T00:00:00Z");
  auto young = finished("/home/u/rv", "bbbb0002", "2026-11-20T00:00:00Z");
  REQUIRE(store.create(old.id, to_json(old)));
  REQUIRE(store.create(young.id, to_json(young)));
  for (const auto* id : {"aaaa0001", "bbbb0002"}) {
    std::ofstream(settle_log_path(store, id)) << "race: chosen\n";
  }
  CHECK(settle_log_path(store, "aaaa0001") == base / "requests" / "aaaa0001.settle.log");
  test::FakeRunner runner;
  runner.expect_prefix({"sh", "-c"}, test::FakeRunner::reply(0));
  test::FakeClock clock(*parse_utc_iso("2026-11-21T00:00:00Z"));
  std::vector<RequestRecord*> all{&old, &young};
  prune_remote_state(runner, clock, store, all, 14 * 86400); // only `old` is 14 days old
  CHECK(runner.all_consumed());
  CHECK_FALSE(old.pruned_at.empty());
  CHECK(young.pruned_at.empty());
  CHECK_FALSE(fs::exists(settle_log_path(store, "aaaa0001")));
  CHECK(fs::exists(settle_log_path(store, "bbbb0002")));
  fs::remove_all(base);
}
