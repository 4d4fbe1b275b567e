#include "strategy/probe_plan.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace rv;
using namespace rv::strategy;
namespace fs = std::filesystem;

namespace {

Candidate a100_candidate(const std::string& id, std::int64_t full_s)
{
  Candidate c;
  c.id = id;
  c.gpu_type = "a100_80";
  c.partition = "gpu-a100";
  c.gres = "gpu:a100_80:4";
  c.constraint = "gpupod&a100_80gb";
  c.account = "lab's";
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.cpus_per_task = 64;
  c.mem_mb_per_node = 500'000;
  c.probe_full_s = full_s;
  return c;
}

// A fresh temp dir per test, removed at the end.
struct TempDir {
  fs::path path;
  TempDir()
  {
    std::random_device rd;
    path = fs::temp_directory_path() / ("rv-probe-test-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string read(const fs::path& p)
{
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fake sbatch: logs its argv one per line; a walltime of up to FAKE_WINDOW_MIN minutes starts
// now, longer ones in 3 h; an account containing FAILME is refused. Messages go to stderr.
constexpr const char* k_fake_sbatch = R"SH(#!/bin/sh
printf '%s\n' "$@" >> "$FAKE_LOG"
echo "---" >> "$FAKE_LOG"
min=0
for a in "$@"; do case $a in --time=*) min=${a#--time=};; esac; done
case "$*" in *FAILME*) echo "sbatch: error: Batch job submission failed: Invalid account" >&2; exit 1;; esac
now=$(date +%s)
if [ "$min" -le "$FAKE_WINDOW_MIN" ]; then start=$now; else start=$((now + 10800)); fi
echo "sbatch: Job 4242 to start at $(date -d @$start +%Y-%m-%dT%H:%M:%S) using 128 processors on nodes a[1-2] in partition gpu-a100" >&2
)SH";

} // namespace

TEST_CASE("probe script: every argument single-quoted, & in constraint intact")
{
  std::vector<Candidate> cands{a100_candidate("c1", 86400)};
  auto script = probe_script(cands, {});
  CHECK(script.find("'--constraint=gpupod&a100_80gb'") != std::string::npos);
  CHECK(script.find("'--account=lab'\\''s'") != std::string::npos);
  auto line_start = script.find("rv_candidate 'c1'");
  REQUIRE(line_start != std::string::npos);
  auto line = script.substr(line_start, script.find('\n', line_start) - line_start);
  CHECK(line == "rv_candidate 'c1' '86400' '1800' '3600' '7200' '14400' '28800' '57600' '86400' -- "
                "'--job-name=rv-probe' '--output=/dev/null' '--partition=gpu-a100' '--nodes=2' "
                "'--ntasks-per-node=1' '--cpus-per-task=64' '--mem=500000M' '--gres=gpu:a100_80:4' "
                "'--constraint=gpupod&a100_80gb' '--account=lab'\\''s' '--wrap=true'");
  auto excluded = a100_candidate("c3", 3600);
  excluded.exclude = "a1,a2";
  CHECK(probe_script({excluded}, {}).find("'--exclude=a1,a2' '--wrap=true'") != std::string::npos);
  auto grid = coarse_grid(a100_candidate("c2", 5000), {});
  CHECK(grid == std::vector<std::int64_t>{1800, 3600, 5000});
}

TEST_CASE("probe script: runs under /bin/sh against a fake sbatch; refinement converges")
{
  TempDir tmp;
  {
    std::ofstream(tmp.path / "sbatch") << k_fake_sbatch;
  }
  fs::permissions(tmp.path / "sbatch", fs::perms::owner_all);
  PlanOptions opts;
  std::vector<Candidate> cands{a100_candidate("c1", 86400), a100_candidate("c2", 3000), a100_candidate("c3", 7200)};
  cands[2].account = "FAILME";
  std::ofstream(tmp.path / "probe.sh") << probe_script(cands, opts);
  // A timezone far from UTC on the "login node": the script converts there, so it cannot matter.
  auto cmd = "cd '" + tmp.path.string() + "' && PATH='" + tmp.path.string() + "':\"$PATH\" TZ=Pacific/Auckland FAKE_WINDOW_MIN=150 FAKE_LOG=log /bin/sh probe.sh > out 2> err";
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto out = read(tmp.path / "out");
  CAPTURE(out);
  CAPTURE(read(tmp.path / "err"));
  auto windows = parse_probe_output(out, cands, opts);
  REQUIRE(windows.list.size() == 3);

  const auto& w = windows.list[0];
  CHECK(w.complete);
  // The true cliff is 150 min = 9000 s; refinement ends within the resolution below it.
  CHECK(w.max_now_s <= 9000);
  CHECK(w.max_now_s >= 9000 - opts.refine_resolution_s);
  REQUIRE(w.now_start_in_s);
  CHECK(*w.now_start_in_s <= 5);
  REQUIRE(w.full_start_in_s);
  CHECK(*w.full_start_in_s >= 10790);
  CHECK(*w.full_start_in_s <= 10800);
  CHECK(w.probes.size() <= 12);
  CHECK(windows.find(rv::model::Shape{"a100_80", "gpu-a100", 2, 4}) == &windows.list[0]);

  // A request that fits entirely: no cliff, no refinement.
  const auto& fits = windows.list[1];
  CHECK(fits.max_now_s == 3000);
  CHECK(fits.probes.size() == 2); // 1800 and the full 3000
  REQUIRE(fits.full_start_in_s);

  // Refused by sbatch: no start estimate (unknown, not a made-up number), message kept.
  const auto& refused = windows.list[2];
  CHECK(refused.max_now_s == 0);
  CHECK_FALSE(refused.full_start_in_s);
  REQUIRE(!refused.probes.empty());
  CHECK(refused.probes[0].message.find("Invalid account") != std::string::npos);

  // The constraint reached sbatch as one argument, & and all.
  auto log = read(tmp.path / "log");
  CHECK(log.find("\n--constraint=gpupod&a100_80gb\n") != std::string::npos);
  CHECK(log.find("\n--account=lab's\n") != std::string::npos);
  CHECK(log.starts_with("--test-only\n--time=30\n"));
}

TEST_CASE("probe output parser: thresholds, non-monotonic answers, noise")
{
  std::vector<Candidate> cands{a100_candidate("c1", 14400)};
  PlanOptions opts;
  std::string out = "Welcome to the cluster!\n"
                    "NOW 1000\n"
                    "PROBE c1 1800 1299 sbatch: Job 1 to start at 2026-01-01T00:00:00\n" // 299 s: now
                    "NOW 1000\n"
                    "PROBE c1 3600 1301 late\n"                                            // 301 s: later
                    "NOW 1000\n"
                    "PROBE c1 7200 1000 odd\n"                                             // now again
                    "NOW 1000\n"
                    "PROBE c1 14400 FAIL sbatch: error: Requested time limit is invalid\n"
                    "PROBE c9 1800 1000 unknown candidate\n"
                    "PROBE c1 garbage\n"
                    "DONE c1\n";
  auto w = parse_probe_output(out, cands, opts);
  REQUIRE(w.list.size() == 1);
  CHECK(w.list[0].probes.size() == 4);
  CHECK(w.list[0].max_now_s == 1800); // the 7200 "now" is above a cliff: not trusted
  CHECK(w.list[0].now_start_in_s == 299);
  CHECK_FALSE(w.list[0].full_start_in_s);
  CHECK(std::any_of(w.list[0].notes.begin(), w.list[0].notes.end(), [](const auto& n) { return n.find("non-monotonic") != std::string::npos; }));
  CHECK(std::any_of(w.list[0].notes.begin(), w.list[0].notes.end(), [](const auto& n) { return n.find("Requested time limit is invalid") != std::string::npos; }));

  auto cut = parse_probe_output("NOW 5\nPROBE c1 1800 5 ok\n", cands, opts);
  REQUIRE(cut.list.size() == 1);
  CHECK_FALSE(cut.list[0].complete);
  CHECK(parse_probe_output("", cands, opts).list.empty());
}

TEST_CASE("probe output: negative epochs are not numbers a clock prints")
{
  PlanOptions opts;
  std::vector<Candidate> cands{a100_candidate("c1", 7200)};
  // START - NOW overflowed int64, wrapped negative, and the probe read as starting now.
  auto w = parse_probe_output("NOW -9223372036854775807\nPROBE c1 1800 9223372036854775807 x\nDONE c1\n", cands, opts);
  REQUIRE(w.list.size() == 1);
  CHECK(w.list[0].probes.empty());
  CHECK(w.list[0].max_now_s == 0);
  CHECK(std::any_of(w.list[0].notes.begin(), w.list[0].notes.end(),
                    [](const auto& n) { return n == "a probe came without a NOW line; ignored"; }));
  auto late = parse_probe_output("NOW 1000\nPROBE c1 1800 9223372036854775807 x\nDONE c1\n", cands, opts);
  REQUIRE(late.list.size() == 1);
  REQUIRE(late.list[0].probes.size() == 1);
  CHECK(late.list[0].probes[0].start_in_s == 9223372036854775807 - 1000);
}
