// The backfill probe script and the reader of its framed answers (slurm/probe.hpp).

#include "slurm/probe.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace rv;
using namespace rv::slurm;
namespace fs = std::filesystem;

namespace {

ProbeJob a100_job(const std::string& id, std::vector<std::int64_t> grid)
{
  ProbeJob j;
  j.id = id;
  j.grid_s = std::move(grid);
  j.request.partition = "gpu-a100";
  j.request.nodes = 2;
  j.request.cpus_per_task = 64;
  j.request.mem_mb_per_node = 500'000;
  j.request.gres = "gpu:a100_80:4";
  j.request.constraint = "gpupod&a100_80gb";
  j.request.account = "lab's";
  return j;
}

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
// now, longer ones in 3 h; an account containing FAILME is refused as Slurm refuses. Slurm 22.05's
// wording, on stderr.
constexpr const char* k_fake_sbatch = R"SH(#!/bin/sh
printf '%s\n' "$@" >> "$FAKE_LOG"
echo "---" >> "$FAKE_LOG"
min=0
for a in "$@"; do case $a in --time=*) min=${a#--time=};; esac; done
case "$*" in *FAILME*) echo "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified" >&2; exit 1;; esac
now=$(date +%s)
if [ "$min" -le "$FAKE_WINDOW_MIN" ]; then start=$now; else start=$((now + 10800)); fi
echo "sbatch: Job 4242 to start at $(date -d @$start +%Y-%m-%dT%H:%M:%S) using 128 processors on nodes a[1-2] in partition gpu-a100" >&2
)SH";

std::string frame(const std::string& id, std::int64_t wall, const std::string& answer)
{
  return fmt::format("PROBE {} {} {}\n{}\n", id, wall, answer.size(), answer);
}

} // namespace

TEST_CASE("probe script: every argument single-quoted, & in the constraint intact")
{
  auto script = probe_script({a100_job("c1", {1800, 3600, 86400})}, {});
  auto line_start = script.find("rv_j1() { rv_job 'c1'");
  REQUIRE(line_start != std::string::npos);
  auto line = script.substr(line_start, script.find('\n', line_start) - line_start);
  CHECK(line == "rv_j1() { rv_job 'c1' '86400' '1800' '3600' '86400' -- "
                "'--job-name=rv-probe' '--output=/dev/null' '--partition=gpu-a100' '--nodes=2' "
                "'--ntasks-per-node=1' '--cpus-per-task=64' '--mem=500000M' '--gres=gpu:a100_80:4' "
                "'--constraint=gpupod&a100_80gb' '--account=lab'\\''s' '--wrap=true'; }");
  CHECK(script.ends_with("RV_NJOBS=1\nrv_run_all\n"));
  auto excluded = a100_job("c3", {3600});
  excluded.request.exclude = "a1,a2";
  CHECK(probe_script({excluded}, {}).find("'--exclude=a1,a2' '--wrap=true'") != std::string::npos);
  CHECK(script.find("RV_THRESHOLD=300\nRV_RESOLUTION=900\nRV_MAX_REFINE=12\nRV_PAR=1\n") != std::string::npos);
  ProbePolicy flood;
  flood.concurrency = 1000; // clamped: slurmctld is shared
  CHECK(probe_script({}, flood).find("RV_PAR=16\n") != std::string::npos);
}

TEST_CASE("probe output: framed answers read by parse_test_only, in the login node's zone")
{
  // 2026-11-22T06:00:00 at +0100 is 05:00:00 UTC = 1795323600; NOW is 300 s before.
  const std::string out =
      "Welcome to the cluster!\n"
      "NOW 1795323300 +0100\n" +
      frame("c1", 1800,
            "sbatch: Job 7 to start at 2026-11-22T06:00:00 using 8 processors on nodes g1 in partition gpu") +
      "NOW 1795323300 +0100\n" +
      // An answer that itself holds newlines and a line that looks like a record.
      frame("c1", 3600,
            "sbatch: warning: PROBE c9 1 1\nsbatch: Job 8 to start at 2026-11-22T09:00:00 using 8 processors on nodes "
            "g1 in partition gpu") +
      "NOW 1795323300 +0100\n" +
      frame("c2", 1800, "sbatch: error: Batch job submission failed: Invalid node name specified") +
      "PROBE c3 garbage\n" + "NOW 1795323300 +0100\n" + frame("c4", 60, "something else entirely") +
      "DONE c1\nDONE c2\n";
  auto parsed = parse_probe_output(out);
  REQUIRE(parsed.answers.size() == 4);
  CHECK(parsed.answers[0].id == "c1");
  CHECK(parsed.answers[0].walltime_s == 1800);
  CHECK(parsed.answers[0].start_in_s == 300);
  CHECK_FALSE(parsed.answers[0].refused);
  CHECK(parsed.answers[1].start_in_s == 300 + 3 * 3600);
  CHECK(parsed.answers[2].id == "c2");
  CHECK(parsed.answers[2].refused);
  CHECK_FALSE(parsed.answers[2].start_in_s);
  CHECK(parsed.answers[2].message == "Invalid node name specified");
  CHECK(parsed.answers[3].id == "c4"); // unreadable: no estimate, not a refusal, the words kept
  CHECK_FALSE(parsed.answers[3].start_in_s);
  CHECK_FALSE(parsed.answers[3].refused);
  CHECK(parsed.answers[3].message == "something else entirely");
  CHECK(parsed.done == std::set<std::string>{"c1", "c2"});
  CHECK(parsed.notes.size() == 1); // the garbage record
  // A length past the end of the output (cut off) is skipped, not read out of bounds.
  auto cut = parse_probe_output("NOW 1 +0000\nPROBE c1 1800 999\nsbatch: Job 1 to start");
  CHECK(cut.answers.empty());
  CHECK(cut.notes.size() == 1);
  CHECK(parse_probe_output("").answers.empty());
}

TEST_CASE("probe script: runs under /bin/sh against a fake sbatch, refinement converges, refusals kept")
{
  TempDir tmp;
  {
    std::ofstream(tmp.path / "sbatch") << k_fake_sbatch;
  }
  fs::permissions(tmp.path / "sbatch", fs::perms::owner_all);
  ProbePolicy policy{300, 900, 12};
  auto failing = a100_job("c3", {1800, 3600, 7200});
  failing.request.account = "FAILME";
  std::ofstream(tmp.path / "probe.sh") << probe_script(
      {a100_job("c1", {1800, 3600, 7200, 14400, 28800, 57600, 86400}), a100_job("c2", {1800, 3000}), failing}, policy);
  // A timezone far from UTC on the "login node": the offset travels with NOW, so it cannot matter.
  auto cmd = "cd '" + tmp.path.string() + "' && PATH='" + tmp.path.string() +
             "':\"$PATH\" TZ=Pacific/Auckland FAKE_WINDOW_MIN=150 FAKE_LOG=log /bin/sh probe.sh > out 2> err";
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto out = read(tmp.path / "out");
  CAPTURE(out);
  CAPTURE(read(tmp.path / "err"));
  auto parsed = parse_probe_output(out);
  CHECK(parsed.notes.empty());
  CHECK(parsed.done == std::set<std::string>{"c1", "c2", "c3"});
  auto of = [&](const std::string& id) {
    std::vector<ProbeAnswer> v;
    std::copy_if(parsed.answers.begin(), parsed.answers.end(), std::back_inserter(v),
                 [&](const ProbeAnswer& a) { return a.id == id; });
    return v;
  };
  // c1: the true cliff is 150 min = 9000 s; bisection ends within the resolution below it.
  std::int64_t longest_now = 0;
  for (const auto& a : of("c1")) {
    REQUIRE(a.start_in_s);
    // The fake answers "now" or "now + 3 h" by its own clock, which may have passed a second
    // boundary (or, on a loaded machine, a few) since the script's NOW: both ends get 5 s.
    CHECK((*a.start_in_s <= 5 || (*a.start_in_s >= 10790 && *a.start_in_s <= 10805)));
    if (*a.start_in_s <= 5) {
      longest_now = std::max(longest_now, a.walltime_s);
    }
  }
  CHECK(longest_now <= 9000);
  CHECK(longest_now >= 9000 - policy.resolution_s);
  const auto c1 = of("c1");
  CHECK(c1.size() <= 12);
  CHECK(std::any_of(c1.begin(), c1.end(), [](const auto& a) { return a.walltime_s == 86400; })); // the full request
  // c2 fits entirely: no refinement.
  CHECK(of("c2").size() == 2);
  // c3: refused with Slurm's reason; no made-up start.
  REQUIRE(!of("c3").empty());
  for (const auto& a : of("c3")) {
    CHECK(a.refused);
    CHECK_FALSE(a.start_in_s);
    CHECK(a.message == "Invalid account or account/partition combination specified");
  }
  // The constraint reached sbatch as one argument, & and all.
  auto log = read(tmp.path / "log");
  CHECK(log.find("\n--constraint=gpupod&a100_80gb\n") != std::string::npos);
  CHECK(log.find("\n--account=lab's\n") != std::string::npos);
  CHECK(log.starts_with("--test-only\n--time=30\n"));
}

TEST_CASE("probe output: hostile numbers are not a clock's (#15 defect 8)")
{
  const std::string answer =
      "sbatch: Job 1 to start at 2026-11-22T06:00:00 using 8 processors on nodes g1 in partition gpu";
  auto w = parse_probe_output("NOW -9223372036854775807 +0000\n" + frame("c1", 1800, answer) +
                              "NOW 9223372036854775807 +0000\n" + frame("c1", 3600, answer) +
                              "PROBE c1 1800 9223372036854775807\nx\n");
  REQUIRE(w.answers.size() == 2);
  for (const auto& a : w.answers) {
    CHECK_FALSE(a.start_in_s); // no placed start from a made-up clock: unknown, never "now"
  }
  CHECK(w.notes.size() == 1); // the absurd length
}

TEST_CASE("probe script: every NOW line carries the one timestamp taken when the script started")
{
  auto script = rv::slurm::probe_script({{"c1", {60, 120}, {"gpu-a", 1, 1, 1000, "gpu:a:1", "", "", "", ""}},
                                         {"c2", {60, 120}, {"gpu-b", 1, 1, 1000, "gpu:b:1", "", "", "", ""}}},
                                        {});
  auto t0 = script.find("rv_t0=$(date +%s)");
  REQUIRE(t0 != std::string::npos);
  CHECK(t0 < script.find("rv_probe()"));
  CHECK(script.find("echo \"NOW $rv_t0 $(date +%z)\"") != std::string::npos);
  CHECK(script.find("NOW $rv_now") == std::string::npos); // never the clock after each probe
}

TEST_CASE("probe script: concurrent shapes overlap, at most `concurrency` at once, answers in job order")
{
  TempDir tmp;
  {
    // Counts the probes running at once (a marker file each, 0.5 s long), then answers as the fake.
    std::ofstream(tmp.path / "sbatch")
        << std::string(k_fake_sbatch)
               .replace(std::string(k_fake_sbatch).find("echo \"---\""), 0,
                        "touch \"run.$$\"; sleep 0.5; ls run.* | wc -l >> conc; rm -f \"run.$$\"\n");
  }
  fs::permissions(tmp.path / "sbatch", fs::perms::owner_all);
  std::vector<ProbeJob> jobs;
  for (int i = 1; i <= 6; ++i) {
    jobs.push_back(a100_job(fmt::format("c{}", i), {1800, 3600}));
  }
  auto run = [&](int concurrency) {
    ProbePolicy policy{300, 900, 12, concurrency};
    std::ofstream(tmp.path / "probe.sh") << probe_script(jobs, policy);
    fs::remove(tmp.path / "conc");
    fs::create_directories(tmp.path / "t");
    auto cmd = "cd '" + tmp.path.string() + "' && PATH='" + tmp.path.string() +
               "':\"$PATH\" TMPDIR=t FAKE_WINDOW_MIN=150 FAKE_LOG=log /bin/sh probe.sh > out 2> err";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::vector<std::pair<std::string, std::int64_t>> order;
    for (const auto& a : parse_probe_output(read(tmp.path / "out")).answers) {
      order.emplace_back(a.id, a.walltime_s);
    }
    int most = 0;
    std::istringstream conc(read(tmp.path / "conc"));
    for (int n = 0; conc >> n;) {
      most = std::max(most, n);
    }
    return std::make_pair(order, most);
  };
  auto [sequential, one] = run(1);
  auto [concurrent, most] = run(3);
  CHECK(one == 1);
  CHECK(most > 1);  // shapes were probed at the same time
  CHECK(most <= 3); // never more than asked
  REQUIRE(sequential.size() == 12);
  CHECK(concurrent == sequential);     // the same answers in the same order: job order, then walltime
  CHECK(fs::is_empty(tmp.path / "t")); // the buffers are removed
}
