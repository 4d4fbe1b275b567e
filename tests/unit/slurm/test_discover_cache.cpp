// The static half of discovery (slurm/discover_cache.hpp): which commands, the fingerprint, the
// node checks and the merge of the fresh dynamic half.

#include "fakes/fake_runner.hpp"
#include "slurm/discover.hpp"
#include "slurm/discover_cache.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace rv;
using rv::test::FakeRunner;
using namespace rv::slurm;

namespace {

model::Node node(const std::string& name, int cpus, int gpus, std::vector<std::string> features)
{
  model::Node n;
  n.name = name;
  n.cpus_total = cpus;
  n.mem_mb = 1000;
  n.gpus = {{"a100", gpus}};
  n.features = std::move(features);
  return n;
}

} // namespace

TEST_CASE("discover cache: static commands are the node, config, zone, container and accounting reads")
{
  DiscoveryQuery q;
  q.user = "alice";
  q.job_ends = true;
  std::vector<std::string> statics;
  for (const auto& c : discovery_commands(q)) {
    if (is_static_discovery(c)) {
      statics.push_back(c.argv[0] + (c.argv[0] == "scontrol" ? " " + c.argv.back() : ""));
    }
  }
  // sh: the container probe (after readlink), then sh -c 'sacct ...' rv-job-ends.
  CHECK(statics == std::vector<std::string>{"scontrol node", "scontrol config", "readlink", "sh", "sacctmgr",
                                            "sacctmgr", "sacctmgr", "sh"});
  proc::Command squeue;
  squeue.argv = {"squeue", "--start"};
  CHECK_FALSE(is_static_discovery(squeue)); // anything not named is read every time
}

TEST_CASE("discover cache: the fingerprint ignores partition State, not limits or the config stamp")
{
  std::vector<proc::Command> cmds(2);
  cmds[0].argv = {"sinfo"};
  cmds[1].argv = {"scontrol", "-o", "show", "partition"};
  auto fp = [&](const std::string& part, const std::string& stamp) {
    return static_fingerprint(cmds, {FakeRunner::reply(0, ""), FakeRunner::reply(0, part)},
                              FakeRunner::reply(0, stamp));
  };
  const auto base = fp("PartitionName=a MaxTime=1-00:00:00 State=UP\n", "1 2 3\n");
  CHECK(base == fp("PartitionName=a MaxTime=1-00:00:00 State=DOWN\n", "1 2 3\n"));
  CHECK(base != fp("PartitionName=a MaxTime=2-00:00:00 State=UP\n", "1 2 3\n"));
  CHECK(base != fp("PartitionName=a MaxTime=1-00:00:00 State=UP\n", "9 2 3\n"));
}

TEST_CASE("discover cache: nodes_changed names what changed, refresh_dynamic copies only the dynamic fields")
{
  std::vector<model::Node> cached = {node("g1", 64, 8, {"a", "b"}), node("g2", 64, 8, {})};
  CHECK(nodes_changed(cached, {node("g1", 64, 8, {"b", "a"}), node("g2", 64, 8, {})}).empty());
  CHECK(nodes_changed(cached, {node("g1", 64, 8, {"a", "b"})}) == "2 nodes cached, 1 now");
  CHECK(nodes_changed(cached, {node("g1", 64, 8, {"a", "b"}), node("g3", 64, 8, {})}) == "node g3 is new");
  CHECK(nodes_changed(cached, {node("g1", 32, 8, {"a", "b"}), node("g2", 64, 8, {})}) ==
        "node g1: CPUs or memory changed");
  CHECK(nodes_changed(cached, {node("g1", 64, 4, {"a", "b"}), node("g2", 64, 8, {})}) == "node g1: GPUs changed");
  CHECK(nodes_changed(cached, {node("g1", 64, 8, {"a"}), node("g2", 64, 8, {})}) == "node g1: features changed");

  model::Cluster c;
  c.nodes = cached;
  auto fresh = node("g1", 999, 1, {});
  fresh.state = "mixed";
  fresh.usable = false;
  fresh.cpus_alloc = 16;
  fresh.gpus_used = {{"a100", 2}};
  fresh.gpus_used_known = true;
  fresh.reason = "maint";
  refresh_dynamic(c, {fresh});
  CHECK(c.nodes[0].state == "mixed");
  CHECK_FALSE(c.nodes[0].usable);
  CHECK(c.nodes[0].cpus_alloc == 16);
  CHECK(c.nodes[0].gpus_free() == 6);
  CHECK(c.nodes[0].reason == "maint");
  CHECK(c.nodes[0].cpus_total == 64); // static: the cached value
  CHECK(c.nodes[1].cpus_alloc == 0);  // not in the fresh list: untouched
}
