#include "fakes/fake_runner.hpp"
#include "slurm/containers.hpp"
#include "slurm/discover.hpp"
#include "slurm/job_ends.hpp"

#include "fakes/recording_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace rv;
using rv::test::FakeRunner;
using namespace rv::slurm;

namespace {

// Counts run_batch calls, so that "one round trip" is checked as "one batch".
class BatchCounter final : public proc::Runner {
public:
  explicit BatchCounter(rv::test::RecordingRunner::Responder r) : m_inner(std::move(r)) {}
  Result<proc::Outcome> run(const proc::Command& cmd) override { return m_inner.run(cmd); }
  Result<std::vector<proc::Outcome>> run_batch(const std::vector<proc::Command>& cmds) override
  {
    ++batches;
    return m_inner.run_batch(cmds);
  }
  std::string where() const override { return "test"; }
  const std::vector<proc::Command>& recorded() const { return m_inner.recorded(); }
  int batches = 0;

private:
  rv::test::RecordingRunner m_inner;
};

bool starts(const proc::Command& c, std::initializer_list<const char*> words)
{
  std::size_t i = 0;
  for (const char* w : words) {
    if (i >= c.argv.size() || c.argv[i] != w) {
      return false;
    }
    ++i;
  }
  return true;
}

proc::Outcome cluster_responder(const proc::Command& c, bool scontrol_nodes_fail)
{
  if (starts(c, {"sinfo"})) {
    return FakeRunner::reply(
        0, "a100-1|gpu*|mixed|64|8/56/0/64|512000|64000|gpu:a100:4(S:0-1)|gpu:a100:1(IDX:0)|a100|none\n"
           "a100-2|gpu*|drained|64|0/64/0/64|512000|0|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|a100|bad gpu\n");
  }
  if (starts(c, {"scontrol", "-o", "show", "partition"})) {
    return FakeRunner::reply(
        0, "PartitionName=gpu AllowAccounts=ALL AllowQos=ALL Default=YES QoS=N/A DefaultTime=NONE MaxNodes=2 "
           "MaxTime=2-00:00:00 Nodes=a100-[1-2] State=UP TRES=cpu=128,gres/gpu=8 "
           "TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0 DefMemPerGPU=65536\n");
  }
  if (starts(c, {"scontrol", "-d", "-o", "show", "node"})) {
    if (scontrol_nodes_fail) {
      return FakeRunner::reply(1, "", "slurm_load_node error: Unable to contact slurm controller\n");
    }
    // CfgTRES without gres/gpu and no GresUsed: sinfo must fill in the used GPUs.
    return FakeRunner::reply(
        0, "NodeName=a100-1 CPUAlloc=8 CPUTot=64 Gres=gpu:a100:4(S:0-1) RealMemory=512000 AllocMem=64000 "
           "State=MIXED Partitions=gpu CfgTRES=cpu=64,mem=500G AllocTRES=cpu=8\n"
           "NodeName=a100-2 CPUAlloc=0 CPUTot=64 Gres=gpu:a100:4(S:0-1) RealMemory=512000 AllocMem=0 "
           "State=IDLE+DRAIN Partitions=gpu Reason=bad gpu [root@2026-01-01T00:00:00]\n");
  }
  if (starts(c, {"scontrol", "show", "config"})) {
    return FakeRunner::reply(0, "ClusterName = rvtest\nSLURM_VERSION = 22.05.8\nPriorityFlags = MAX_TRES\n"
                                "SchedulerParameters = bf_interval=30,bf_max_job_user=5\n");
  }
  if (starts(c, {"date"})) {
    return FakeRunner::reply(0, "+0100 CET\n");
  }
  if (starts(c, {"readlink"})) {
    return FakeRunner::reply(0, "/usr/share/zoneinfo/Europe/Berlin\n");
  }
  if (starts(c, {"sacctmgr", "-n", "-P", "show", "assoc"})) {
    return FakeRunner::reply(0, "lab1||normal,gpu_qos|gres/gpu=8||||gpu_qos\nlab1|gpu|gpu_qos|||10|20\n");
  }
  if (starts(c, {"sacctmgr", "-n", "-P", "show", "qos"})) {
    return FakeRunner::reply(0, "normal||||\ngpu_qos|gres/gpu=4|8||2-00:00:00\nother|gres/gpu=1|||\n");
  }
  if (starts(c, {"sacctmgr", "-n", "-P", "show", "user"})) {
    return FakeRunner::reply(1, "", "sacctmgr: error: Problem talking to the database\n");
  }
  if (slurm::is_job_ends_command(c)) {
    return FakeRunner::reply(0, "gpu 21 1 20 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  }
  if (slurm::is_container_probe(c)) {
    return FakeRunner::reply(0, "runtime=apptainer\npath=/usr/bin/apptainer\nversion=apptainer version 1.3.4\n");
  }
  return FakeRunner::reply(1, "", "unexpected command");
}

} // namespace

TEST_CASE("discovery_commands lists every probe, the sacctmgr ones only with a user")
{
  CHECK(discovery_commands({}).size() == 7);
  auto cmds = discovery_commands({"alice", {"gpu"}});
  REQUIRE(cmds.size() == 10);
  CHECK(cmds[0].argv.front() == "sinfo");
  CHECK(cmds[0].argv.back() == "gpu");
  CHECK(slurm::is_container_probe(cmds[6])); // the container runtimes ride in the same round trip
  CHECK(cmds[6].concurrent);
  CHECK(cmds[7].argv[5] == "user=alice");
  // With job_ends (a plan's discovery): how early jobs end, last, a read safe to repeat.
  auto with_ends = discovery_commands({"alice", {}, true});
  REQUIRE(with_ends.size() == 11);
  CHECK(slurm::is_job_ends_command(with_ends[10]));
  CHECK(with_ends[10].repeatable);
  CHECK(with_ends[10].argv[2].find("sacct -a -X") != std::string::npos);
  CHECK(discovery_commands({"", {}, true}).size() == 7); // no user, no accounting reads
}

TEST_CASE("discover with job ends: the partition's counts in the cluster, a failed sacct is a warning")
{
  BatchCounter runner([](const proc::Command& c) { return cluster_responder(c, false); });
  auto cluster = discover(runner, {"alice", {}, true});
  REQUIRE_MESSAGE(cluster.has_value(), (cluster ? "" : cluster.error().message));
  CHECK(runner.recorded().size() == 11);
  CHECK(cluster->containers.apptainer == "apptainer");
  CHECK(cluster->containers.apptainer_version == "1.3.4");
  REQUIRE(cluster->end_ratios.count("gpu") == 1);
  CHECK(cluster->end_ratios.at("gpu").jobs == 21);
  CHECK(cluster->end_ratios.at("gpu").counts[1] == 20);
  auto outcomes = std::vector<proc::Outcome>{};
  for (const auto& c : discovery_commands({"alice", {}, true})) {
    outcomes.push_back(slurm::is_job_ends_command(c)
                           ? FakeRunner::reply(1, "", "sacct: error: Problem talking to the database\n")
                           : cluster_responder(c, false));
  }
  auto failed = parse_discovery(outcomes);
  REQUIRE(failed);
  CHECK(failed->end_ratios.empty());
  CHECK(std::any_of(failed->warnings.begin(), failed->warnings.end(),
                    [](const auto& w) { return w.find("how early jobs end") != std::string::npos; }));
}

TEST_CASE("discover makes one round trip and builds the cluster")
{
  BatchCounter runner([](const proc::Command& c) { return cluster_responder(c, false); });
  auto cluster = discover(runner, {"alice", {}});
  REQUIRE_MESSAGE(cluster.has_value(), (cluster ? "" : cluster.error().message));
  CHECK(runner.batches == 1);
  CHECK(runner.recorded().size() == 10);
  REQUIRE(cluster->nodes.size() == 2);
  const auto* a = cluster->find_node("a100-1");
  REQUIRE(a != nullptr);
  CHECK(a->usable);
  CHECK(a->gpus_used_known); // from sinfo's GresUsed
  CHECK(a->gpus_free() == 3);
  CHECK_FALSE(cluster->find_node("a100-2")->usable);
  const auto* p = cluster->find_partition("gpu");
  REQUIRE(p != nullptr);
  CHECK(p->nodes.size() == 2);
  CHECK(p->max_time_s == 2 * 86400);
  CHECK(p->billing.gpu == doctest::Approx(2.0));
  CHECK(cluster->config.cluster_name == "rvtest");
  CHECK(cluster->config.max_tres);
  CHECK(cluster->config.bf_max_job_user == 5);
  CHECK(cluster->utc_offset_s == 3600);
  CHECK(cluster->timezone == "Europe/Berlin");
  CHECK(cluster->limits.accounts == std::vector<std::string>{"lab1"});
  CHECK(cluster->limits.qos == std::vector<std::string>{"gpu_qos", "normal"});
  CHECK(cluster->limits.max_gpus == 4);
  CHECK(cluster->limits.max_jobs == 8);
  CHECK(cluster->limits.max_submit_jobs == 20);
  // MaxWall per QOS (not the smallest of them: a job runs under one), and the DefaultQOS; the
  // second row has no DefaultQOS column and is read all the same.
  CHECK(cluster->limits.qos_max_wall_s == std::map<std::string, std::int64_t>{{"gpu_qos", 2 * 86400}});
  CHECK(cluster->limits.default_qos == "gpu_qos");
  CHECK(cluster->limits.default_account.empty());
  CHECK(cluster->warnings.size() == 1); // the failed sacctmgr show user
}

TEST_CASE("discover falls back to sinfo when scontrol show node fails")
{
  rv::test::RecordingRunner runner([](const proc::Command& c) { return cluster_responder(c, true); });
  auto cluster = discover(runner, {});
  REQUIRE(cluster.has_value());
  CHECK(cluster->nodes.size() == 2);
  CHECK(cluster->find_node("a100-2")->reason == "bad gpu");
  CHECK(cluster->warnings.size() == 1);
}

TEST_CASE("parse_discovery fails when nothing lists the nodes, or on a wrong outcome count")
{
  std::vector<proc::Outcome> outcomes(7, FakeRunner::reply(1, "", "boom"));
  auto c = parse_discovery(outcomes);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().code == ErrorCode::slurm_rejected);
  CHECK_FALSE(parse_discovery(std::vector<proc::Outcome>(3)).has_value());
}

TEST_CASE("parse_discovery reads sinfo only for what scontrol did not say")
{
  // scontrol -d with GresUsed on every node: sinfo's text is not needed, so sinfo that cannot
  // be parsed (a hostlist past max_hosts) does not fail the discovery; without GresUsed it does.
  auto outcomes = [](bool gres_used) {
    std::vector<proc::Outcome> o;
    o.push_back(FakeRunner::reply(0, "n[0-999999]|gpu|idle|64|0/64/0/64|512000|0|gpu:a100:4|gpu:a100:0|(null)|none\n"));
    o.push_back(FakeRunner::reply(0, "PartitionName=gpu Nodes=a100-1 State=UP\n"));
    o.push_back(FakeRunner::reply(
        0, fmt::format("NodeName=a100-1 CPUTot=64 Gres=gpu:a100:4(S:0-1) {}State=MIXED Partitions=gpu\n",
                       gres_used ? "GresUsed=gpu:a100:3(IDX:0-2) " : "")));
    o.push_back(FakeRunner::reply(0, "ClusterName = c\n"));
    o.push_back(FakeRunner::reply(0, "+0000 UTC\n"));
    o.push_back(FakeRunner::reply(0, "/usr/share/zoneinfo/Etc/UTC\n"));
    o.push_back(FakeRunner::reply(0, "")); // no container runtime
    return o;
  };
  auto with = parse_discovery(outcomes(true));
  REQUIRE_MESSAGE(with.has_value(), (with ? "" : with.error().message));
  REQUIRE(with->nodes.size() == 1);
  CHECK(with->nodes[0].gpus_used_known);
  CHECK(with->nodes[0].gpus_free() == 1);
  auto without = parse_discovery(outcomes(false));
  REQUIRE_FALSE(without.has_value());
  CHECK(without.error().message == "range '0-999999' in hostlist item 'n[0-999999]' has more than 100000 hosts");
}
