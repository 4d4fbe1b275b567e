// Every captured output under ../shared/cases/slurm-outputs goes through the parser for its
// folder (see INDEX.md there); GPU files are checked against totals counted by hand.

#include "slurm/gres.hpp"
#include "slurm/sacct.hpp"
#include "slurm/sbatch.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/sinfo.hpp"
#include "slurm/squeue.hpp"
#include "slurm/sshare.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace rv;
using namespace rv::slurm;
namespace fs = std::filesystem;

namespace {

const fs::path corpus = fs::path(RV_SHARED_CASES_DIR) / "slurm-outputs";

std::string slurp(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using F = SinfoField;
// sinfo's column layouts per file, from the command each INDEX.md entry names.
const std::vector<F> default_layout{F::partition, F::ignore, F::ignore, F::node_count, F::state, F::node};
const std::map<std::string, std::pair<std::vector<F>, std::string>> sinfo_layouts{
    {"bih-20.02-default-full-cluster-hostlists-crlf.txt", {default_layout, ""}},
    {"bih-20.02-default-truncated-timelimit-drng-crlf.txt", {default_layout, ""}},
    {"epcc-cirrus-default-resv-maint-EDITED-nodelists.txt", {default_layout, ""}},
    {"issue-slinky-101-25.11.0-default-empty-partition.txt", {default_layout, ""}},
    {"unige-bamboo-default-grep-private-mix-minus-plnd.txt", {default_layout, ""}},
    {"biohub-arc-N-O-untyped-gpu4.txt", {{F::node, F::gres, F::gres_used, F::state}, ""}},
    {"czbiohub-N-O-gres50-gresused50-h200-h100-a40.txt", {{F::node, F::gres, F::gres_used, F::state}, ""}},
    {"issue-vpenso-pr83-20.11.9-N-O-gres-gresused-null-gpu0.txt",
     {{F::node, F::alloc_mem, F::memory, F::cpus_state, F::state, F::gres, F::gres_used}, ""}},
    {"osc-ascend-gres-gresused-N-O.txt", {{F::node, F::gres, F::gres_used, F::state}, ""}},
    {"osc-owens-nodes-RS-US-separators.txt", {{F::cpus, F::node, F::features}, ""}},
    {"osc-pitzer-partition-gres-gresused-truncated-100.txt", {{F::partition, F::gres, F::gres_used}, ""}},
    {"osc-sinfo-F-C.txt", {{F::ignore}, ""}},
    {"sckyzo-17.11.2-gpus-total.txt", {{F::node, F::gres}, ""}},
    {"sckyzo-20.11.8-gpus-idle-untyped.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-20.11.8-gpus-total-untyped.txt", {{F::node_count, F::gres}, ""}},
    {"sckyzo-21.08.5-gpus-idle-null-type.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-23.11.10-gpus-allocated-h100-idx.txt", {{F::node_count, F::gres_used}, ""}},
    {"sckyzo-23.11.10-gpus-idle-h100-mi210.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-23.11.10-gpus-total-truncated-shard.txt", {{F::node_count, F::gres}, ""}},
    {"sckyzo-25.05.3-gpus-snapshot-states.txt", {{F::node_count, F::state, F::gres, F::gres_used}, ""}},
    {"sckyzo-25.05.3-node-detail-gres.txt",
     {{F::node, F::alloc_mem, F::memory, F::cpus_state, F::state, F::partition, F::gres, F::gres_used}, ""}},
    {"sckyzo-25.11.1-gpus-allocated.txt", {{F::node_count, F::gres_used}, ""}},
    {"sckyzo-25.11.1-gpus-idle.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-25.11.1-gpus-total.txt", {{F::node_count, F::gres}, ""}},
    {"sckyzo-25.11.1-partitions-cpu.txt", {{F::partition, F::cpus_state}, ","}},
    {"sckyzo-25.11.1-partitions-gpu-a100-mig-v100.txt", {{F::node_count, F::partition, F::gres, F::gres_used}, ""}},
    {"slurm-docs-26.x-shard-gresused-per-gpu-example.txt", {{F::node, F::gres, F::gres_used}, ""}},
    {"ubccr-nodehost-gres-gresused-untyped-null.txt", {{F::node, F::gres, F::gres_used}, ""}},
    {"unige-bamboo-N-n-c-m-G-C-l-vrampergpu-socket2.txt",
     {{F::node, F::cpus, F::memory, F::gres, F::cpus_state, F::ignore}, ""}},
    {"vpenso-N-O-nodelist-allocmem-memory-cpusstate-statelong.txt",
     {{F::node, F::alloc_mem, F::memory, F::cpus_state, F::state}, ""}},
    {"vpenso-n-T-down-star-fail-star.txt", {{F::node, F::state}, ","}},
};

using Totals = std::map<std::string, int>;
struct GpuExpect {
  Totals gres, used;
  int units; // distinct nodes (files with a node column) or rows (count/partition files)
};
// Counted from the files (an independent script, spot-checked by eye): per GPU type, a node
// listed once per partition counted once; `Nodes` files multiply by the count column.
const std::map<std::string, GpuExpect> sinfo_gpus{
    {"biohub-arc-N-O-untyped-gpu4.txt", {{{"", 96}}, {{"", 20}}, 24}},
    {"czbiohub-N-O-gres50-gresused50-h200-h100-a40.txt",
     {{{"a100", 24}, {"a6000", 24}, {"a40", 56}, {"h100", 48}, {"l40s", 8}, {"h200", 64}},
      {{"a100", 24}, {"a6000", 19}, {"a40", 41}, {"h100", 38}, {"l40s", 3}, {"h200", 64}},
      102}},
    {"issue-vpenso-pr83-20.11.9-N-O-gres-gresused-null-gpu0.txt", {{{"tesla", 32}}, {{"tesla", 22}}, 12}},
    {"osc-ascend-gres-gresused-N-O.txt", {{{"a100", 664}}, {{"a100", 627}}, 298}},
    {"osc-pitzer-partition-gres-gresused-truncated-100.txt",
     {{{"v100", 16}, {"v100-32g", 672}, {"v100-quad", 112}}, {}, 2820}},
    {"sckyzo-17.11.2-gpus-total.txt", {{{"", 16}}, {}, 2}},
    {"sckyzo-20.11.8-gpus-idle-untyped.txt", {{{"", 48}}, {{"", 7}}, 4}},
    {"sckyzo-20.11.8-gpus-total-untyped.txt", {{{"", 48}}, {}, 2}},
    {"sckyzo-21.08.5-gpus-idle-null-type.txt", {{{"", 16}}, {}, 1}},
    {"sckyzo-23.11.10-gpus-allocated-h100-idx.txt", {{}, {{"h100", 33}}, 6}},
    {"sckyzo-23.11.10-gpus-idle-h100-mi210.txt",
     {{{"rtxa5000", 4}, {"h100", 4}, {"mi210", 2}}, {{"h100", 4}, {"mi210", 2}}, 4}},
    {"sckyzo-23.11.10-gpus-total-truncated-shard.txt", {{{"rtxa5000", 4}, {"h100", 4}, {"mi210", 2}}, {}, 4}},
    {"sckyzo-25.05.3-gpus-snapshot-states.txt", {{{"model_a", 64}}, {{"model_a", 18}}, 12}},
    {"sckyzo-25.05.3-node-detail-gres.txt", {{{"model_a", 20}}, {{"model_a", 6}}, 6}},
    {"sckyzo-25.11.1-gpus-allocated.txt",
     {{}, {{"NVlink_A100_40GB", 42}, {"NVlink_A800_80GB", 4}, {"tesla_v100-sxm3-32gb", 32}}, 7}},
    {"sckyzo-25.11.1-gpus-idle.txt",
     {{{"NVlink_A100_40GB", 44}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 21}, {"tesla_v100-sxm3-32gb", 32}},
      {{"NVlink_A100_40GB", 41}, {"NVlink_A800_80GB", 4}, {"tesla_v100-sxm3-32gb", 32}},
      9}},
    {"sckyzo-25.11.1-gpus-total.txt",
     {{{"NVlink_A100_40GB", 65}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 21}, {"tesla_v100-sxm3-32gb", 64}},
      {},
      10}},
    {"sckyzo-25.11.1-partitions-gpu-a100-mig-v100.txt",
     {{{"NVlink_A100_40GB", 44}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 21}, {"tesla_v100-sxm3-32gb", 32}},
      {{"NVlink_A100_40GB", 36}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 1}, {"tesla_v100-sxm3-32gb", 29}},
      13}},
    {"slurm-docs-26.x-shard-gresused-per-gpu-example.txt", {{{"", 4}}, {{"", 1}}, 1}},
    {"ubccr-nodehost-gres-gresused-untyped-null.txt", {{{"V100", 12}, {"P100", 2}, {"", 14}}, {{"V100", 6}, {"", 1}}, 16}},
    {"unige-bamboo-N-n-c-m-G-C-l-vrampergpu-socket2.txt", {{{"nvidia_h100_nvl", 1}}, {}, 1}},
};

void add(Totals& t, const std::vector<model::GpuGres>& gpus, int times)
{
  for (const auto& g : gpus) {
    t[g.type] += g.count * times;
  }
}

std::vector<fs::path> files_in(const std::string& folder)
{
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(corpus / folder)) {
    if (e.is_regular_file()) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("corpus: every captured Slurm output parses with its folder's parser")
{
  if (!fs::is_directory(corpus)) {
    MESSAGE("skipped: no corpus at " << corpus.string());
    return;
  }
  int files = 0;
  std::set<std::string> folders_seen;
  for (const auto& dir : fs::directory_iterator(corpus)) {
    if (!dir.is_directory()) {
      continue;
    }
    auto folder = dir.path().filename().string();
    folders_seen.insert(folder);
    for (const auto& path : files_in(folder)) {
      auto name = path.filename().string();
      auto text = slurp(path);
      CAPTURE(folder);
      CAPTURE(name);
      ++files;
      if (folder == "sinfo") {
        auto layout = sinfo_layouts.find(name);
        REQUIRE_MESSAGE(layout != sinfo_layouts.end(), "no layout for a new sinfo file");
        auto rows = parse_sinfo_columns(text, layout->second.first, layout->second.second);
        REQUIRE_MESSAGE(rows.has_value(), (rows ? "" : rows.error().message));
        CHECK_FALSE(rows->empty());
      } else if (folder == "scontrol-node") {
        auto nodes = parse_scontrol_nodes(text);
        REQUIRE_MESSAGE(nodes.has_value(), (nodes ? "" : nodes.error().message));
      } else if (folder == "scontrol-partition") {
        auto parts = parse_scontrol_partitions(text);
        REQUIRE_MESSAGE(parts.has_value(), (parts ? "" : parts.error().message));
        CHECK_FALSE(parts->empty());
      } else if (folder == "scontrol-job") {
        auto jobs = parse_scontrol_jobs(text);
        REQUIRE_MESSAGE(jobs.has_value(), (jobs ? "" : jobs.error().message));
        CHECK(jobs->size() == 1);
      } else if (folder == "squeue") {
        auto jobs = parse_squeue(text);
        REQUIRE_MESSAGE(jobs.has_value(), (jobs ? "" : jobs.error().message));
      } else if (folder == "sacct") {
        // Headerless captures name their -o list in INDEX.md.
        std::string fields(sacct_fields);
        if (name.starts_with("rug-peregrine")) {
          fields = "JobID,JobName,User,Partition,NodeList,NNodes,ncpus,NTasks,State,Submit,start,end,timelimit,"
                   "elapsed,TotalCPU,UserCPU,SystemCPU,ReqMem,MaxRSS,TRESUsageInTot,TRESUsageOutTot,MaxDiskWrite,"
                   "MaxDiskRead,MaxRSSNode,MaxDiskWriteNode,MaxDiskReadNode,Comment";
        } else if (name.starts_with("issue-jobstats")) {
          fields = "AllocTRES";
        } else if (name.starts_with("sckyzo-17.11.2")) {
          fields = "AllocGRES";
        }
        auto jobs = parse_sacct(text, fields);
        REQUIRE_MESSAGE(jobs.has_value(), (jobs ? "" : jobs.error().message));
      } else if (folder == "sbatch-test-only") {
        auto est = parse_test_only(text);
        if (name.find("allocation-failure") != std::string::npos) {
          REQUIRE_FALSE(est.has_value());
          CHECK(est.error().code == ErrorCode::slurm_rejected);
        } else {
          REQUIRE_MESSAGE(est.has_value(), (est ? "" : est.error().message));
          CHECK_FALSE(est->partition.empty());
        }
      } else if (folder == "sshare") {
        auto rows = parse_sshare(text);
        REQUIRE_MESSAGE(rows.has_value(), (rows ? "" : rows.error().message));
        CHECK_FALSE(rows->empty());
      } else if (folder == "other") { // scontrol show reservation
        auto records = parse_records(text);
        REQUIRE(records.has_value());
        CHECK(records->size() == (name.find("empty") != std::string::npos ? 0U : 1U));
      } else {
        FAIL("no parser for corpus folder " << folder);
      }
    }
  }
  CHECK(files >= 80);
  CHECK(folders_seen.size() == 9);
}

TEST_CASE("corpus: sinfo GPU totals per type")
{
  if (!fs::is_directory(corpus)) {
    MESSAGE("skipped: no corpus at " << corpus.string());
    return;
  }
  for (const auto& [name, expect] : sinfo_gpus) {
    CAPTURE(name);
    const auto& layout = sinfo_layouts.at(name);
    auto rows = parse_sinfo_columns(slurp(corpus / "sinfo" / name), layout.first, layout.second);
    REQUIRE(rows.has_value());
    bool by_node = std::find(layout.first.begin(), layout.first.end(), F::node) != layout.first.end();
    Totals gres, used;
    std::set<std::string> seen;
    int units = 0;
    for (const auto& r : *rows) {
      if (by_node && !seen.insert(r.node).second) {
        continue; // the same node again, for another partition
      }
      ++units;
      add(gres, r.gres, r.node_count);
      add(used, r.gres_used, r.node_count);
    }
    CHECK(gres == expect.gres);
    CHECK(used == expect.used);
    CHECK(units == expect.units);
  }
}

TEST_CASE("corpus: scontrol node GPUs, states and usability")
{
  if (!fs::is_directory(corpus)) {
    MESSAGE("skipped: no corpus at " << corpus.string());
    return;
  }
  auto nodes_of = [](const char* name) {
    auto nodes = parse_scontrol_nodes(slurp(corpus / "scontrol-node" / name));
    REQUIRE(nodes.has_value());
    return *nodes;
  };
  auto totals = [](const std::vector<model::Node>& nodes) {
    Totals t;
    for (const auto& n : nodes) {
      add(t, n.gpus, 1);
    }
    return t;
  };
  {
    auto nodes = nodes_of("bih-20.02-gpu-tesla-mixed-drain-crlf.txt");
    REQUIRE(nodes.size() == 1);
    CHECK(nodes[0].name == "med0304");
    CHECK(totals(nodes) == Totals{{"tesla", 4}});
    CHECK(nodes[0].state == "mixed");
    CHECK_FALSE(nodes[0].usable);
    CHECK_FALSE(nodes[0].gpus_used_known); // CfgTRES has no gres/gpu: AllocTRES says nothing
    CHECK(nodes[0].partitions == std::vector<std::string>{"gpu"});
  }
  {
    auto nodes = nodes_of("issue-awsome-distributed-ai-195-24.05rc1-idle-drain-gres-mismatch.txt");
    REQUIRE(nodes.size() == 1);
    CHECK(totals(nodes) == Totals{{"nvidia-rtx-3090", 1}});
    CHECK_FALSE(nodes[0].usable);
    CHECK(nodes[0].gpus_used_known); // CfgTRES has gres/gpu=1, AllocTRES is empty
    CHECK(nodes[0].gpus_free() == 1);
    CHECK(nodes[0].reason.starts_with("gres/gpu count reported lower than configured (0 < 1)"));
  }
  {
    auto nodes = nodes_of("sckyzo-26.05.2-testcluster-multitype-gres.txt");
    CHECK(nodes.size() == 20);
    CHECK(totals(nodes) == Totals{{"model_a", 20}, {"model_b", 20}});
  }
  {
    auto nodes = nodes_of("aws-pcluster-22.05-23.02-cloud-reboot-issued-maintenance-pylit.txt");
    REQUIRE(nodes.size() == 3);
    for (const auto& n : nodes) {
      CHECK_FALSE(n.usable); // DOWN+..., IDLE+CLOUD+MAINTENANCE+RESERVED
    }
  }
  {
    auto nodes = nodes_of("sckyzo-25.11.2-testcluster-reservation-states.txt");
    REQUIRE(nodes.size() == 7);
    int usable = 0;
    for (const auto& n : nodes) {
      usable += n.usable ? 1 : 0;
    }
    CHECK(usable == 2); // the two IDLE+DYNAMIC_NORM nodes
  }
  {
    auto nodes = nodes_of("rug-peregrine-oneline-cfgtres-pruned.txt");
    CHECK(nodes.size() == 313);
    CHECK(totals(nodes).empty()); // the GPU nodes' CfgTRES lacks gres/gpu
  }
  {
    // A grep fragment with no NodeName: no nodes, but its TRES values still parse.
    auto records = parse_records(slurp(corpus / "scontrol-node" / "issue-slurmcommander-5-sherlock-grep-gres-tres.txt"));
    REQUIRE(records.has_value());
    REQUIRE(records->size() == 1);
    CHECK(total_gpus(*parse_tres_gpus((*records)[0].value("CfgTRES"))) == 4);
    CHECK(total_gpus(*parse_tres_gpus((*records)[0].value("AllocTRES"))) == 3);
  }
}
