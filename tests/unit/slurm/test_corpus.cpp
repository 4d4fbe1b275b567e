// Every captured output under ../shared/cases/slurm-outputs goes through the parser for its
// folder (see INDEX.md there); GPU files are checked against totals counted by hand.

#include "slurm/gres.hpp"
#include "slurm/sacct.hpp"
#include "slurm/sbatch.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/sinfo.hpp"
#include "slurm/squeue.hpp"
#include "slurm/sshare.hpp"
#include "unit/skip.hpp"
#include "unit/slurm/corpus_expectations.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace rv;
using namespace rv::slurm;
namespace fs = std::filesystem;
using namespace rv::test::corpus;

namespace {

const fs::path corpus = test::shared_cases_dir() / "slurm-outputs";

std::string slurp(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void add(Totals& t, const std::vector<model::GpuGres>& gpus, int times)
{
  for (const auto& g : gpus) {
    t[g.type] += g.count * times;
  }
}

template <class Job>
std::string states_of(const std::vector<Job>& jobs)
{
  std::map<std::string, int> n;
  for (const auto& j : jobs) {
    ++n[j.state];
  }
  std::string out;
  for (const auto& [state, count] : n) {
    out += fmt::format(" {}:{}", state.empty() ? "?" : state, count);
  }
  return out;
}

std::string summary(const std::vector<SqueueJob>& jobs)
{
  int gpus = 0;
  for (const auto& j : jobs) {
    auto g = parse_gres(j.tres_per_node);
    gpus += (g ? total_gpus(*g) : 0) * std::max(j.node_count, 1);
  }
  return fmt::format("jobs={}{} gpus={}", jobs.size(), states_of(jobs), gpus);
}

std::string summary(const std::vector<SacctJob>& jobs)
{
  int gpus = 0;
  for (const auto& j : jobs) {
    gpus += total_gpus(j.gpus);
  }
  return fmt::format("jobs={}{} gpus={}", jobs.size(), states_of(jobs), gpus);
}

// Node counts (a NODES column) and node states weighted by them (a STATE column).
std::string sinfo_summary(const std::vector<SinfoRow>& rows, const std::vector<F>& layout)
{
  auto has = [&](F f) { return std::find(layout.begin(), layout.end(), f) != layout.end(); };
  std::string out;
  if (has(F::node_count)) {
    int nodes = 0;
    for (const auto& r : rows) {
      nodes += r.node_count;
    }
    out += fmt::format(" nodes={}", nodes);
  }
  if (has(F::state)) {
    std::map<std::string, int> states;
    int usable = 0;
    for (const auto& r : rows) {
      states[r.state.base] += r.node_count;
      usable += r.state.usable ? r.node_count : 0;
    }
    for (const auto& [state, n] : states) {
      out += fmt::format(" {}:{}", state.empty() ? "?" : state, n);
    }
    out += fmt::format(" usable={}", usable);
  }
  return out;
}

void check_understood(const std::string& folder, const std::string& name, const std::string& got)
{
  auto want = understood.find(folder + "/" + name);
  REQUIRE_MESSAGE(want != understood.end(), "no stated expectation for " << folder << "/" << name << ": " << got);
  CHECK(got == want->second);
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
  if (!test::need_shared_dir(corpus)) {
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
        check_understood(folder, name,
                         fmt::format("rows={}{}", rows->size(), sinfo_summary(*rows, layout->second.first)));
      } else if (folder == "scontrol-node") {
        auto nodes = parse_scontrol_nodes(text);
        REQUIRE_MESSAGE(nodes.has_value(), (nodes ? "" : nodes.error().message));
        int gpus = 0, usable = 0;
        for (const auto& n : *nodes) {
          gpus += total_gpus(n.gpus);
          usable += n.usable ? 1 : 0;
        }
        check_understood(folder, name, fmt::format("nodes={} usable={} gpus={}", nodes->size(), usable, gpus));
      } else if (folder == "scontrol-partition") {
        auto parts = parse_scontrol_partitions(text);
        REQUIRE_MESSAGE(parts.has_value(), (parts ? "" : parts.error().message));
        CHECK_FALSE(parts->empty());
        std::size_t hosts = 0;
        int gpus = 0, unknown = 0;
        for (const auto& p : *parts) {
          hosts += p.nodes.size();
          gpus += std::max(p.total_gpus, 0);
          unknown += p.total_gpus < 0 ? 1 : 0;
        }
        check_understood(
            folder, name,
            fmt::format("partitions={} hosts={} gpus={} gpus_unknown={}", parts->size(), hosts, gpus, unknown));
      } else if (folder == "scontrol-job") {
        auto jobs = parse_scontrol_jobs(text);
        REQUIRE_MESSAGE(jobs.has_value(), (jobs ? "" : jobs.error().message));
        CHECK(jobs->size() == 1);
        int gpus = 0;
        for (const auto& j : *jobs) {
          gpus += total_gpus(j.gpus);
        }
        check_understood(folder, name, fmt::format("jobs={}{} gpus={}", jobs->size(), states_of(*jobs), gpus));
      } else if (folder == "squeue") {
        auto format = squeue_formats.find(name);
        auto jobs = format == squeue_formats.end() ? parse_squeue(text) : parse_squeue(text, format->second);
        REQUIRE_MESSAGE(jobs.has_value(), (jobs ? "" : jobs.error().message));
        check_understood(folder, name, summary(*jobs));
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
        check_understood(folder, name, summary(*jobs));
      } else if (folder == "sbatch-test-only") {
        auto est = parse_test_only(text);
        if (name.find("allocation-failure") != std::string::npos) {
          REQUIRE_FALSE(est.has_value());
          CHECK(est.error().code == ErrorCode::slurm_rejected);
          check_understood(folder, name, "rejected");
        } else {
          REQUIRE_MESSAGE(est.has_value(), (est ? "" : est.error().message));
          CHECK_FALSE(est->partition.empty());
          check_understood(folder, name,
                           fmt::format("job={} start={} processors={} nodes={} partition={}", est->job_id,
                                       format_cluster_time(est->start), est->processors, est->nodes, est->partition));
        }
      } else if (folder == "sshare") {
        auto rows = parse_sshare(text);
        REQUIRE_MESSAGE(rows.has_value(), (rows ? "" : rows.error().message));
        CHECK_FALSE(rows->empty());
        int users = 0, fair = 0;
        for (const auto& r : *rows) {
          users += r.user.empty() ? 0 : 1;
          fair += r.fair_share ? 1 : 0;
        }
        check_understood(folder, name, fmt::format("rows={} users={} fairshare={}", rows->size(), users, fair));
      } else if (folder == "other") { // scontrol show reservation
        auto records = parse_records(text);
        REQUIRE(records.has_value());
        CHECK(records->size() == (name.find("empty") != std::string::npos ? 0U : 1U));
        check_understood(folder, name, fmt::format("records={}", records->size()));
      } else {
        FAIL("no parser for corpus folder " << folder);
      }
    }
  }
  CHECK(files >= 80);
  CHECK(static_cast<std::size_t>(files) == understood.size()); // no stale entries either
  CHECK(folders_seen.size() == 9);
}

TEST_CASE("corpus: sinfo GPU totals per type")
{
  if (!test::need_shared_dir(corpus)) {
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
  if (!test::need_shared_dir(corpus)) {
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
    auto records =
        parse_records(slurp(corpus / "scontrol-node" / "issue-slurmcommander-5-sherlock-grep-gres-tres.txt"));
    REQUIRE(records.has_value());
    REQUIRE(records->size() == 1);
    CHECK(total_gpus(*parse_tres_gpus((*records)[0].value("CfgTRES"))) == 4);
    CHECK(total_gpus(*parse_tres_gpus((*records)[0].value("AllocTRES"))) == 3);
  }
}
