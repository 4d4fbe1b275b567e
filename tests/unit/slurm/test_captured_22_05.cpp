// Outputs captured from the project's own Slurm 22.05 testbed (tests/data/slurm/22.05, see its
// README.md).

#include "slurm/gres.hpp"
#include "slurm/sacct.hpp"
#include "slurm/sbatch.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/sinfo.hpp"
#include "slurm/squeue.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace rv;
using namespace rv::slurm;
namespace fs = std::filesystem;

namespace {

const fs::path data = fs::path(RV_TEST_DATA_DIR) / "slurm" / "22.05";

std::string read(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using F = SinfoField;
// `sinfo -N -h -o %N|%P|%T|%c|%m|%G|%f|%C` (README.md)
const std::vector<F> sinfo_nodes_layout{F::node,   F::partition, F::state,    F::cpus,
                                        F::memory, F::gres,      F::features, F::cpus_state};

std::map<std::string, int> gpu_totals(const std::vector<model::Node>& nodes)
{
  std::map<std::string, int> t;
  for (const auto& n : nodes) {
    for (const auto& g : n.gpus) {
      t[g.type] += g.count;
    }
  }
  return t;
}

} // namespace

TEST_CASE("captured 22.05 outputs parse, and sinfo agrees with scontrol on GPUs")
{
  // The captures are committed (testbed/capture.sh): missing is a broken checkout, not a skip.
  REQUIRE_MESSAGE(fs::is_directory(data), "no " << data.string());
  int parsed = 0;
  for (const auto& e : fs::directory_iterator(data)) {
    auto name = e.path().filename().string();
    auto text = read(e.path());
    CAPTURE(name);
    auto ok = [&](const auto& r) {
      REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
      ++parsed;
    };
    if (name.starts_with("sinfo_nodes.")) {
      auto rows = parse_sinfo_columns(text, sinfo_nodes_layout, "|");
      ok(rows);
      auto from_sinfo = nodes_from_sinfo(*rows);
      REQUIRE(from_sinfo.has_value());
      auto scontrol_file = data / ("scontrol_show_node." + name.substr(12));
      if (fs::exists(scontrol_file)) {
        auto from_scontrol = parse_scontrol_nodes(read(scontrol_file));
        REQUIRE(from_scontrol.has_value());
        CHECK(from_sinfo->size() == from_scontrol->size());
        CHECK(gpu_totals(*from_sinfo) == gpu_totals(*from_scontrol));
        CHECK_FALSE(gpu_totals(*from_scontrol).empty());
      }
    } else if (name.starts_with("sinfo.")) {
      ok(parse_sinfo_columns(text, {F::partition, F::ignore, F::ignore, F::node_count, F::state, F::node}));
    } else if (name.starts_with("scontrol_show_node.")) {
      ok(parse_scontrol_nodes(text));
    } else if (name.starts_with("scontrol_show_partition")) {
      auto parts = parse_scontrol_partitions(text);
      ok(parts);
      CHECK_FALSE(parts->empty());
    } else if (name.starts_with("scontrol_show_config")) {
      auto config = parse_scontrol_config(text);
      ok(config);
      CHECK(config->slurm_version.starts_with("22.05"));
    } else if (name.starts_with("scontrol_show_job.")) {
      auto jobs = parse_scontrol_jobs(text);
      ok(jobs);
      CHECK(jobs->size() == 1);
    } else if (name.starts_with("squeue_pipe.")) {
      ok(parse_squeue(text, "%i|%P|%j|%u|%a|%T|%M|%l|%D|%C|%S|%e|%r|%b|%N"));
    } else if (name.starts_with("squeue_start_pipe.")) {
      auto jobs = parse_squeue(text, "%i|%P|%j|%T|%S|%D|%Y|%r");
      ok(jobs);
      CHECK_FALSE(jobs->empty());
    } else if (name.starts_with("squeue")) {
      auto jobs = parse_squeue(text);
      ok(jobs);
      CHECK_FALSE(jobs->empty());
    } else if (name.starts_with("sacct")) {
      auto jobs = parse_sacct(text);
      ok(jobs);
      CHECK_FALSE(jobs->empty());
    } else if (name.starts_with("sbatch_test_only.")) {
      auto est = parse_test_only(text);
      if (name.find("failure") != std::string::npos || name.find("invalid") != std::string::npos) {
        REQUIRE_FALSE(est.has_value());
        CHECK(est.error().code == ErrorCode::slurm_rejected);
        ++parsed;
      } else {
        ok(est);
      }
    } else {
      MESSAGE("not a parser input: " << name); // README.md, sdiag
    }
  }
  CHECK(parsed > 0);
}

TEST_CASE("RecordReader streams the captured scontrol outputs record by record, as parse_records reads them")
{
  for (const char* file : {"scontrol_show_node.busy.txt", "scontrol_show_node.idle.txt", "scontrol_show_partition.txt",
                           "scontrol_show_job.running.txt"}) {
    CAPTURE(file);
    const auto text = read(data / file);
    auto owned = parse_records(text);
    REQUIRE(owned.has_value());
    REQUIRE_FALSE(owned->empty());
    RecordReader reader(text);
    std::size_t n = 0;
    while (const auto* r = reader.next()) {
      REQUIRE(n < owned->size());
      const auto& o = (*owned)[n];
      // Same keys in the same order, same values (no key is printed twice in these outputs).
      REQUIRE(r->fields.size() == o.fields.size());
      for (std::size_t i = 0; i < o.fields.size(); ++i) {
        CHECK(r->fields[i].first == o.fields[i].first);
        CHECK(r->fields[i].second == o.fields[i].second);
      }
      ++n;
    }
    CHECK(n == owned->size());
    CHECK(reader.next() == nullptr); // stays at the end
  }
  // Every node of the busy capture, multi-line layout: one record per `NodeName=`.
  const auto busy = read(data / "scontrol_show_node.busy.txt");
  std::size_t names = 0;
  for (auto at = busy.find("NodeName="); at != std::string::npos; at = busy.find("NodeName=", at + 1)) {
    ++names;
  }
  CHECK(parse_records(busy)->size() == names);
}
