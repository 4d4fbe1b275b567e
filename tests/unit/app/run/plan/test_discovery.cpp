// Discovery and probes through the per-host cache (app/run/plan/discovery.hpp): cold = 2 round trips,
// warm = 1, stale facts re-read, a corrupt cache ignored, --no-cache (expiry 0) never writes.

#include "app/run/plan/assoc_cache.hpp"
#include "app/run/plan/discovery.hpp"
#include "core/store/cache_store.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <unistd.h>

using namespace rv;
using rv::test::FakeRunner;
using namespace rv::app;

namespace {

// A two-node a100 cluster; one round trip per run or batch. Probes: every shape starts now.
class FakeCluster final : public proc::Runner {
public:
  std::string partition_max_time = "2-00:00:00";
  int cpus = 64;
  std::vector<std::vector<std::string>> seen;
  int probe_scripts = 0;

  Result<proc::Outcome> run(const proc::Command& c) override
  {
    ++m_round_trips;
    return answer(c);
  }
  Result<std::vector<proc::Outcome>> run_batch(const std::vector<proc::Command>& cmds) override
  {
    ++m_round_trips;
    std::vector<proc::Outcome> out;
    for (const auto& c : cmds) {
      out.push_back(answer(c));
    }
    return out;
  }
  std::string where() const override { return "ssh test@cluster:22"; }
  std::string user() override { return user_name; }
  std::string user_name; // "" = unknown: discovery runs no sacctmgr
  int sacctmgr_exit = 0;

private:
  proc::Outcome answer(const proc::Command& c)
  {
    seen.push_back(c.argv);
    const auto& a = c.argv;
    auto node = [&](int i) {
      return fmt::format(
          "a100-{}|gpu-a100|idle|{}|0/{}/0/{}|512000|0|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|a100|none\n", i, cpus,
          cpus, cpus);
    };
    if (a[0] == "sinfo") {
      return FakeRunner::reply(0, node(1) + node(2));
    }
    if (a == std::vector<std::string>{"scontrol", "-o", "show", "partition"}) {
      return FakeRunner::reply(
          0, fmt::format("PartitionName=gpu-a100 AllowAccounts=ALL AllowQos=ALL Default=YES QoS=N/A MaxNodes=2 "
                         "MaxTime={} Nodes=a100-[1-2] State=UP TRES=cpu=128,gres/gpu=8\n",
                         partition_max_time));
    }
    if (a[0] == "scontrol" && a[1] == "-d") {
      std::string out;
      for (int i = 1; i <= 2; ++i) {
        out += fmt::format("NodeName=a100-{} CPUAlloc=0 CPUTot={} Gres=gpu:a100:4(S:0-1) RealMemory=512000 "
                           "AllocMem=0 State=IDLE Partitions=gpu-a100 AvailableFeatures=a100\n",
                           i, cpus);
      }
      return FakeRunner::reply(0, out);
    }
    if (a[0] == "scontrol") {
      return FakeRunner::reply(0, "ClusterName = rvtest\nSLURM_VERSION = 22.05.8\n");
    }
    if (a[0] == "date") {
      return FakeRunner::reply(0, "+0000 UTC\n");
    }
    if (a[0] == "sacctmgr") {
      const bool assoc = a[4] == "assoc";
      return FakeRunner::reply(sacctmgr_exit, a[4] == "user" ? "research\n"
                                              : assoc        ? "research|gpu-a100|normal||||\n"
                                                             : "normal||||\n");
    }
    if (a[0] == "rider") { // a caller's own read (discover_and_probe's riders): echoes its word
      return FakeRunner::reply(0, a.at(1));
    }
    if (a[0] == "readlink") {
      return FakeRunner::reply(0, "/usr/share/zoneinfo/UTC\n");
    }
    if (a[0] == "sh" && a[1] == "-c" && a.size() == 5 && a[3] == "rv-resolve") {
      return FakeRunner::reply(0, std::string("/home/test/") + a[4].substr(2) + '\0'); // rv's root, `~/.rv` by default
    }
    if (a[0] == "sh" && a[1] == "-c" && a.back() != "rv-probe") {
      return FakeRunner::reply(0, "1795000000 3242 42\n"); // the config stamp
    }
    if (a.size() == 4 && a[0] == "sh" && a[1] == "-c" && a[3] == "rv-probe") {
      ++probe_scripts;
      // Every job id of the script answers once: its full walltime starts at NOW.
      std::string out;
      const std::regex job(R"(rv_job '([^']+)' '([0-9]+)')");
      const auto& script = a[2];
      for (std::sregex_iterator it(script.begin(), script.end(), job), end; it != end; ++it) {
        const std::string answer =
            "sbatch: Job 9 to start at 2026-11-22T04:55:00 using 8 processors on nodes a100-1 in partition gpu-a100";
        out += fmt::format("NOW 1795323300 +0000\nPROBE {} {} {}\n{}\nDONE {}\n", (*it)[1].str(), (*it)[2].str(),
                           answer.size(), answer, (*it)[1].str());
      }
      return FakeRunner::reply(0, out);
    }
    proc::Outcome o;
    o.exit_code = 127;
    return o;
  }
};

struct World {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("rv-discovery-test-{}", ::getpid());
  FakeCluster cluster;
  FakeCluster local;
  test::FakeClock clock;
  store::RecordStore requests{dir / "requests"};
  secrets::Store secrets{dir / "secrets.json"};
  Settings settings;
  test::CaptureOutput output;
  store::CacheStore cache{dir / "cache"};
  Env env{cluster, local, clock, requests, secrets, settings, output, false, 0, "/home/t", dir};
  World()
  {
    std::filesystem::remove_all(dir);
    env.cache = &cache;
  }
  ~World() { std::filesystem::remove_all(dir); }

  Result<Discovered> discover(const std::vector<proc::Command>& riders = {})
  {
    model::JobRequest r;
    r.gpus = 1;
    r.time_s = 3600;
    const int before = cluster.round_trips();
    auto d = discover_and_probe(env, {}, r, {}, riders);
    trips = cluster.round_trips() - before;
    return d;
  }
  int trips = 0;

  int sacctmgr_seen() const
  {
    return static_cast<int>(
        std::count_if(cluster.seen.begin(), cluster.seen.end(), [](const auto& a) { return a[0] == "sacctmgr"; }));
  }
  // Removes the cache files whose name starts with `prefix` ("discovery-": as if it expired).
  void forget(const std::string& prefix)
  {
    for (const auto& f : std::filesystem::directory_iterator(dir / "cache")) {
      if (f.path().filename().string().starts_with(prefix)) {
        std::filesystem::remove(f.path());
      }
    }
  }
};

} // namespace

// Issue #38 item 7: `rv run`'s push listing rides in discovery's batch, cold or warm.
TEST_CASE("discovery: the caller's riders run in the fresh facts' batch, no round trip of their own")
{
  World w;
  std::vector<proc::Command> riders(2);
  riders[0].argv = {"rider", "first"};
  riders[1].argv = {"rider", "second"};
  for (const char* pass : {"cold", "warm"}) {
    CAPTURE(pass);
    w.cluster.seen.clear();
    auto d = w.discover(riders);
    REQUIRE(d);
    CHECK(d->cache == pass);
    CHECK(w.trips == (std::string(pass) == "cold" ? 2 : 1)); // as without them
    REQUIRE(d->riders.size() == 2);
    CHECK(d->riders[0].out == "first");
    CHECK(d->riders[1].out == "second");
    const auto rode =
        std::count_if(w.cluster.seen.begin(), w.cluster.seen.end(), [](const auto& a) { return a[0] == "rider"; });
    CHECK(rode == 2);
    w.clock.advance(std::chrono::seconds(60));
  }
  auto none = w.discover();
  REQUIRE(none);
  CHECK(none->riders.empty());
}

TEST_CASE("discovery cache: cold is 2 round trips, warm is 1 with the same windows")
{
  World w;
  auto cold = w.discover();
  REQUIRE(cold);
  CHECK(w.trips == 2);
  CHECK(cold->cache == "cold");
  // rv's directories rode along: submission will be one round trip (app/request/remote_roots.hpp).
  REQUIRE(cold->roots);
  CHECK(cold->roots->root == "/home/test/.rv");
  CHECK(cold->roots->cache == "/home/test/.rv/cache");
  REQUIRE(!cold->windows.list.empty());
  CHECK(cold->windows.list.front().full_start_in_s == 0);
  const auto files = std::distance(std::filesystem::directory_iterator(w.dir / "cache"), {});
  CHECK(files == 1);

  w.clock.advance(std::chrono::seconds(60));
  w.cluster.seen.clear();
  auto warm = w.discover();
  REQUIRE(warm);
  CHECK(w.trips == 1);
  CHECK(warm->cache == "warm");
  REQUIRE(warm->roots); // resolved again, in the one warm round trip
  CHECK(warm->roots->root == "/home/test/.rv");
  CHECK(w.cluster.probe_scripts == 2); // one each: the warm one rode with discovery
  // Only the dynamic half was read again: no sacctmgr/config/node/readlink.
  for (const auto& a : w.cluster.seen) {
    CAPTURE(fmt::format("{}", fmt::join(a, " ")));
    CHECK_FALSE((a[0] == "readlink" || (a[0] == "scontrol" && a[1] != "-o")));
  }
  REQUIRE(warm->windows.list.size() == cold->windows.list.size());
  for (std::size_t i = 0; i < warm->windows.list.size(); ++i) {
    CHECK(warm->windows.list[i].candidate_id == cold->windows.list[i].candidate_id);
    CHECK(warm->windows.list[i].max_now_s == cold->windows.list[i].max_now_s);
    CHECK(warm->windows.list[i].probes.size() == cold->windows.list[i].probes.size());
  }
  CHECK(warm->cluster.nodes.size() == 2);
  CHECK(warm->cluster.config.cluster_name == "rvtest");
}

TEST_CASE("discovery cache: expired, changed partitions or nodes, corrupt, or off")
{
  World w;
  REQUIRE(w.discover());
  SUBCASE("expired after the configured time: cold again, in one round trip (the old shape's probes ride along)")
  {
    w.settings.discovery_cache_s = 600;
    w.clock.advance(std::chrono::seconds(601));
    w.cluster.seen.clear();
    auto d = w.discover();
    REQUIRE(d);
    CHECK(d->cache == "cold");
    CHECK(w.trips == 1);
    CHECK(w.cluster.probe_scripts == 2);
    const auto read = [&](const std::vector<std::string>& prefix) {
      return std::any_of(w.cluster.seen.begin(), w.cluster.seen.end(),
                         [&](const auto& a) { return std::equal(prefix.begin(), prefix.end(), a.begin()); });
    };
    CHECK(read({"scontrol", "-d"})); // every static fact read again
    CHECK(read({"scontrol", "show", "config"}));
    CHECK(read({"readlink"}));
    REQUIRE(!d->windows.list.empty());
    CHECK(d->windows.list.front().full_start_in_s == 0);
    // Rewritten now: warm again a minute later.
    w.clock.advance(std::chrono::seconds(60));
    auto again = w.discover();
    REQUIRE(again);
    CHECK(again->cache == "warm");
  }
  SUBCASE("expired, and the nodes changed meanwhile: the fresh facts decide, the plan still comes")
  {
    w.clock.advance(std::chrono::seconds(601));
    w.cluster.cpus = 32;
    auto d = w.discover();
    REQUIRE(d);
    CHECK(d->cache == "cold");
    CHECK(d->cluster.nodes.front().cpus_total == 32);
  }
  SUBCASE("a partition's limits changed: the static facts are read again, the plan still comes")
  {
    w.cluster.partition_max_time = "1-00:00:00";
    auto d = w.discover();
    REQUIRE(d);
    CHECK(d->cache.starts_with("stale: "));
    CHECK(w.trips == 2); // dynamic + speculative probes, then the static facts (the shapes did not change)
    CHECK(d->cluster.partitions.front().max_time_s == 86400);
  }
  SUBCASE("a node's CPUs changed (sinfo says so): stale")
  {
    w.cluster.cpus = 32;
    auto d = w.discover();
    REQUIRE(d);
    CHECK(d->cache.find("CPUs or memory changed") != std::string::npos);
    CHECK(d->cluster.nodes.front().cpus_total == 32);
  }
  SUBCASE("a corrupt or foreign file is a miss, never an error")
  {
    for (const auto& f : std::filesystem::directory_iterator(w.dir / "cache")) {
      std::ofstream(f.path()) << "{\"version\": 1, \"target\": \"ssh test@cluster:22\", \"outcomes\": 7";
    }
    auto d = w.discover();
    REQUIRE(d);
    CHECK(d->cache == "cold");
    for (const auto& f : std::filesystem::directory_iterator(w.dir / "cache")) {
      std::ofstream(f.path()) << R"({"version": 99, "target": "ssh test@cluster:22", "user": ""})";
    }
    d = w.discover();
    REQUIRE(d);
    CHECK(d->cache == "cold");
  }
  SUBCASE("expiry 0 (--no-cache): read everything, write nothing")
  {
    std::filesystem::remove_all(w.dir / "cache");
    w.settings.discovery_cache_s = 0;
    w.cluster.seen.clear();
    auto d = w.discover();
    REQUIRE(d);
    CHECK(d->cache == "off");
    CHECK(w.trips == 2);
    CHECK_FALSE(std::filesystem::exists(w.dir / "cache"));
    for (const auto& a : w.cluster.seen) {
      // no config stamp without a cache (rv's roots are resolved, the probes and the container probe run all the same)
      CHECK_FALSE((a[0] == "sh" && a[1] == "-c" &&
                   !(a.size() > 3 && (a[3] == "rv-resolve" || a[3] == "rv-probe" || a[3] == "rv-containers"))));
    }
  }
}

TEST_CASE("association facts: their own lifetime, a refresh due after the discovery cache's expiry")
{
  const std::int64_t life = 86400, refresh = 600, t0 = 1'000'000;
  CHECK(assoc_use(t0, false, t0, 0, refresh) == AssocUse::off);
  CHECK(assoc_use(std::nullopt, false, t0, life, refresh) == AssocUse::read_now);
  CHECK(assoc_use(t0, false, t0, life, refresh) == AssocUse::cached);
  CHECK(assoc_use(t0, false, t0 + refresh, life, refresh) == AssocUse::cached);
  CHECK(assoc_use(t0, false, t0 + refresh + 1, life, refresh) == AssocUse::cached_refresh);
  CHECK(assoc_use(t0, false, t0 + life, life, refresh) == AssocUse::cached_refresh);
  CHECK(assoc_use(t0, false, t0 + life + 1, life, refresh) == AssocUse::read_now);
  CHECK(assoc_use(t0, false, t0 - 1, life, refresh) == AssocUse::read_now); // the clock went back
  // A failed sacctmgr (accounting unreachable) is kept no longer than the other static facts.
  CHECK(assoc_use(t0, true, t0 + refresh, life, refresh) == AssocUse::cached);
  CHECK(assoc_use(t0, true, t0 + refresh + 1, life, refresh) == AssocUse::read_now);
  // A lifetime shorter than the refresh age: never a refresh, expired at its end.
  CHECK(assoc_use(t0, false, t0 + 300, 200, refresh) == AssocUse::read_now);
}

TEST_CASE("association facts through discovery: no sacctmgr on a cold plan while they are cached")
{
  World w;
  w.cluster.user_name = "test";
  auto first = w.discover(); // nothing cached: sacctmgr runs in the discovery round trip
  REQUIRE(first);
  CHECK(w.sacctmgr_seen() == 3);
  CHECK(first->cluster.limits.default_account == "research");
  CHECK(std::distance(std::filesystem::directory_iterator(w.dir / "cache"), {}) == 2); // discovery + assoc

  SUBCASE("the discovery cache expired, the association facts did not: cold without sacctmgr")
  {
    w.clock.advance(std::chrono::seconds(60));
    w.forget("discovery-");
    w.cluster.seen.clear();
    auto cold = w.discover();
    REQUIRE(cold);
    CHECK(cold->cache == "cold");
    CHECK(w.trips == 2);
    CHECK(w.sacctmgr_seen() == 0);
    CHECK(cold->cluster.limits.default_account == "research"); // from the cache
    CHECK(cold->cluster.limits.accounts == std::vector<std::string>{"research"});
    CHECK_FALSE(w.env.after.refresh_assoc);
  }
  SUBCASE("older than discovery_cache: served, and a background refresh is due, after it, none")
  {
    w.clock.advance(std::chrono::seconds(601));
    w.forget("discovery-");
    w.cluster.seen.clear();
    auto d = w.discover();
    REQUIRE(d);
    CHECK(w.sacctmgr_seen() == 0);
    CHECK(d->cluster.limits.default_account == "research");
    CHECK(w.env.after.refresh_assoc);
    const int before = w.cluster.round_trips();
    REQUIRE(refresh_assoc(w.env));
    CHECK(w.cluster.round_trips() - before == 1);
    CHECK(w.sacctmgr_seen() == 3);
    w.env.after = {};
    auto again = w.discover(); // warm, and the facts are fresh again
    REQUIRE(again);
    CHECK(again->cache == "warm");
    CHECK(w.sacctmgr_seen() == 3);
    CHECK_FALSE(w.env.after.refresh_assoc);
  }
  SUBCASE("expired (assoc_cache): read in the warm round trip itself, still one round trip")
  {
    w.settings.assoc_cache_s = 300;
    w.clock.advance(std::chrono::seconds(301));
    w.cluster.seen.clear();
    auto d = w.discover();
    REQUIRE(d);
    CHECK(d->cache == "warm");
    CHECK(w.trips == 1);
    CHECK(w.sacctmgr_seen() == 3);
    w.cluster.seen.clear();
    REQUIRE(w.discover()); // read just now: cached again
    CHECK(w.sacctmgr_seen() == 0);
  }
  SUBCASE("a failed sacctmgr is not kept longer than the other static facts")
  {
    w.forget("");
    w.cluster.sacctmgr_exit = 1;
    REQUIRE(w.discover());
    w.cluster.sacctmgr_exit = 0;
    w.clock.advance(std::chrono::seconds(601));
    w.forget("discovery-");
    w.cluster.seen.clear();
    auto d = w.discover();
    REQUIRE(d);
    CHECK(w.sacctmgr_seen() == 3);
    CHECK(d->cluster.limits.default_account == "research");
  }
  SUBCASE("assoc_cache 0: static facts of the discovery cache, as before")
  {
    w.settings.assoc_cache_s = 0;
    w.clock.advance(std::chrono::seconds(60));
    w.forget("discovery-");
    w.cluster.seen.clear();
    REQUIRE(w.discover());
    CHECK(w.sacctmgr_seen() == 3);
  }
}
