// rv's expected wait (strategy/early_end.hpp): where jobs end early, the start comes sooner than
// Slurm's plan, which has every job run to its limit; and the job-ends read that feeds it.

#include "slurm/job_ends.hpp"
#include "strategy/early_end.hpp"
#include "strategy/plan.hpp"

#include "fixtures.hpp"
#include "unit/test_data.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

using namespace rv;
using namespace rv::strategy;

namespace {

model::EndRatios ratios(std::initializer_list<std::pair<int, int>> step_counts)
{
  model::EndRatios r;
  for (auto [step, n] : step_counts) {
    r.counts[static_cast<std::size_t>(step)] += n;
    r.jobs += n;
  }
  return r;
}

model::Node a100_node(const std::string& name, int used)
{
  model::Node n;
  n.name = name;
  n.partitions = {"gpu"};
  n.state = used == 4 ? "allocated" : "mixed";
  n.gpus = {{"a100", 4}};
  n.gpus_used = {{"a100", used}};
  n.gpus_used_known = true;
  return n;
}

model::QueuedJob running(const std::string& id, const std::string& node, std::int64_t started_ago, std::int64_t limit)
{
  model::QueuedJob j;
  j.id = id;
  j.running = true;
  j.partition = "gpu";
  j.nodes = {node};
  j.gpus_per_node = {{"a100", 4}};
  j.gpus_known = true;
  j.start_in_s = -started_ago;
  j.end_in_s = limit - started_ago;
  return j;
}

// A pending job Slurm plans on `node` in `start_in` seconds, for `limit` seconds.
model::QueuedJob pending(const std::string& id, const std::string& node, std::int64_t start_in, std::int64_t limit)
{
  model::QueuedJob j;
  j.id = id;
  j.partition = "gpu";
  j.nodes = {node};
  j.gpus_per_node = {{"a100", 4}};
  j.gpus_known = true;
  j.start_in_s = start_in;
  j.end_in_s = start_in + limit;
  return j;
}

// Two nodes of 4 A100s, both full: n1's job started a minute ago, n2's ten minutes ago, both with
// an hour's limit. Slurm's plan: the first 4 GPUs free at n1's limit end, in 59 minutes.
struct Fixture {
  model::Cluster cluster;
  model::QueueSnapshot queue;
  Candidate c;

  Fixture()
  {
    model::Partition p;
    p.name = "gpu";
    p.nodes = {"n1", "n2"};
    cluster.partitions = {p};
    cluster.nodes = {a100_node("n1", 4), a100_node("n2", 4)};
    // 30 jobs ended in the last day, each after 10-15 % of its limit.
    cluster.end_ratios["gpu"] = ratios({{2, 30}});
    queue.known = true;
    queue.now_epoch = 1'000'000;
    queue.jobs = {running("1", "n1", 60, 3600), running("2", "n2", 600, 3600)};
    c.gpu_type = "a100";
    c.partition = "gpu";
    c.nodes = 1;
    c.gpus_per_node = 4;
  }
};

// Runs job_ends_command under /bin/sh in `dir`, where a fake `sacct` lies: its exit status and
// output.
std::pair<int, std::string> run_job_ends(const std::filesystem::path& dir)
{
  const auto cmd = slurm::job_ends_command(); // kept: its argv outlives the loop
  std::string line = "cd '" + dir.string() + "' && PATH='" + dir.string() + "':\"$PATH\" /bin/sh -c '";
  for (char ch : cmd.argv[2]) {
    line += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  }
  line += "' rv-job-ends > out 2> err";
  const int rc = std::system(line.c_str());
  std::stringstream out;
  out << std::ifstream(dir / "out").rdbuf();
  return {rc, out.str()};
}

} // namespace

TEST_CASE("expected end ratio: the median of the ratios past what the job has used, its limit past them all")
{
  const auto early = ratios({{2, 30}}); // every job ended at 10-15 % of its limit
  CHECK(expected_end_ratio(early, 0) == doctest::Approx(0.125));
  CHECK(expected_end_ratio(early, 0.12) == doctest::Approx(0.135));     // the part of the step past 0.12
  CHECK(expected_end_ratio(early, 0.2) == doctest::Approx(1.0));        // ran past them all: its limit
  CHECK(expected_end_ratio(ratios({{0, 2}}), 0) == doctest::Approx(1)); // 2 jobs say nothing
  model::EndRatios even;
  for (std::size_t i = 0; i < model::EndRatios::steps; ++i) {
    even.counts[i] = 10;
    even.jobs += 10;
  }
  CHECK(expected_end_ratio(even, 0) == doctest::Approx(0.5));
  CHECK(expected_end_ratio(even, 0.5) == doctest::Approx(0.75));
  for (double used : {0.0, 0.3, 0.61, 0.99}) {
    CHECK(expected_end_ratio(even, used) >= used); // never before now
  }
  // Jobs that all ran to their limit (TIMEOUT): the limit, whatever was used.
  CHECK(expected_end_ratio(ratios({{model::EndRatios::steps, 25}}), 0) == doctest::Approx(1.0));
}

TEST_CASE("expected wait: a running job ends where jobs like it did, one already past them ends at its limit")
{
  Fixture f;
  // n1's job (1 minute of an hour used) is expected to end at 12.5 % of its hour: 450 s from its
  // start, 390 s from now. n2's (10 minutes used, past every ratio seen) at its limit.
  auto e = expected_wait(f.cluster, f.queue, f.c, 600, 3540);
  REQUIRE(e);
  CHECK(e->wait_s == 390);
  CHECK(e->why.find("30 ended jobs on gpu") != std::string::npos);
  CHECK(e->why.find("Slurm's plan") != std::string::npos);

  SUBCASE("a pending job planned ahead takes n1 first, for its own expected run, then n1 is ours")
  {
    f.queue.jobs.push_back(pending("3", "n1", 3540, 3600)); // Slurm: at n1's limit end; ours would follow it
    auto later = expected_wait(f.cluster, f.queue, f.c, 600, 3540 + 3600);
    REQUIRE(later);
    // After the pending job's run on n1: n1 frees in 300-480 s, the pending job runs 360-540 s;
    // the median of the replays' sums is their middle, 390 + 450.
    CHECK(later->wait_s == doctest::Approx(390 + 450).epsilon(0.02));
    CHECK(later->why.find("1 pending ahead") != std::string::npos);
  }
  SUBCASE("first come, first served: a pending job Slurm plans after this one still takes n1 first (it came first)")
  {
    f.cluster.config.first_come = true; // priority/basic
    f.queue.jobs.push_back(pending("4", "n1", 4000, 3600));
    auto after = expected_wait(f.cluster, f.queue, f.c, 600, 3540);
    REQUIRE(after);
    CHECK(after->wait_s == doctest::Approx(390 + 450).epsilon(0.05)); // the median of 33 sums of two draws
    CHECK(after->why.find("1 pending ahead") != std::string::npos);
  }
  SUBCASE("with priorities a pending job Slurm plans after this one may be outranked: not ahead of it")
  {
    f.cluster.config.first_come = false; // priority/multifactor
    f.queue.jobs.push_back(pending("4", "n1", 4000, 3600));
    auto same = expected_wait(f.cluster, f.queue, f.c, 600, 3540);
    REQUIRE(same);
    CHECK(same->wait_s == 390);
    CHECK(same->why.find("0 pending ahead") != std::string::npos);
  }
  SUBCASE("idle GPUs a whole-node job has reserved: a walltime longer than the gap waits for another node")
  {
    f.cluster.config.first_come = true; // priority/basic
    // n1: 4 of 8 GPUs idle now, the other 4 held by a job started a minute ago; a pending 8-GPU
    // job is planned on n1 when that job's limit ends. n2: full until its limit (3000 s).
    f.cluster.nodes[0].gpus = {{"a100", 8}};
    f.queue.jobs[0].gpus_per_node = {{"a100", 4}};
    auto whole = pending("7", "n1", 3540, 3600);
    whole.gpus_per_node = {{"a100", 8}};
    f.queue.jobs.push_back(whole);
    // Slurm plans ours (2 h) on n2 at 3000. The 4 idle GPUs on n1 are not ours for 2 h: job 7 takes
    // the whole of n1 when job 1 ends (~390 s) and runs its own ~450 s; then n1 is free.
    auto long_one = expected_wait(f.cluster, f.queue, f.c, 7200, 3000);
    REQUIRE(long_one);
    CHECK(long_one->wait_s == doctest::Approx(390 + 450).epsilon(0.05));
    auto short_one = expected_wait(f.cluster, f.queue, f.c, 120, 3000);
    REQUIRE(short_one);
    CHECK(short_one->wait_s == 0); // 2 minutes fit in front of job 7 now
  }
  SUBCASE("the walltime must fit before a pending job ahead starts on the node")
  {
    f.queue.jobs[0] = running("1", "n1", 60, 600);         // n1 frees at 0.125 x 600 = 75 s from start: in 15 s
    f.queue.jobs.push_back(pending("5", "n1", 540, 3600)); // Slurm's plan: at job 1's limit end
    // The pending job starts on n1 when it frees (15 s) and holds it for 450 s; an hour's walltime
    // fits on n1 only after that.
    auto e2 = expected_wait(f.cluster, f.queue, f.c, 3600, 5000);
    REQUIRE(e2);
    CHECK(e2->wait_s == doctest::Approx(15 + 450).epsilon(0.02));
  }
  SUBCASE("a pending job on two nodes starts when the later of them frees, ours fits on n1 before it or after")
  {
    auto both = pending("6", "n1", 3540, 3600);
    both.nodes = {"n1", "n2"};
    f.queue.jobs.push_back(both); // Slurm plans it on both nodes in 3540 s
    // n1 frees in 300-480 s, n2 at its limit (3000 s): the pending job starts at 3000 on both.
    auto short_one = expected_wait(f.cluster, f.queue, f.c, 600, 3540 + 3600);
    REQUIRE(short_one);
    CHECK(short_one->wait_s == 390); // 600 s fit on n1 before 3000
    auto long_one = expected_wait(f.cluster, f.queue, f.c, 3000, 3540 + 3600);
    REQUIRE(long_one);
    CHECK(long_one->wait_s == doctest::Approx(3000 + 450).epsilon(0.02)); // after the pending job's run
  }
  SUBCASE("too few ended jobs, no queue, or nothing before Slurm's start: the plan's wait stands")
  {
    f.cluster.end_ratios["gpu"] = ratios({{2, k_min_end_jobs - 1}});
    CHECK_FALSE(expected_wait(f.cluster, f.queue, f.c, 600, 3540));
    f.cluster.end_ratios["gpu"] = ratios({{2, 30}});
    f.queue.known = false;
    CHECK_FALSE(expected_wait(f.cluster, f.queue, f.c, 600, 3540));
    f.queue.known = true;
    CHECK_FALSE(expected_wait(f.cluster, f.queue, f.c, 600, 300)); // Slurm already says sooner
  }
  SUBCASE("two nodes wanted: the later of the two expected ends")
  {
    f.c.nodes = 2;
    auto both = expected_wait(f.cluster, f.queue, f.c, 600, 3540);
    REQUIRE(both);
    CHECK(both->wait_s == 3000); // n2's job, past every ratio seen, ends at its limit
  }
}

TEST_CASE("job ends: the login node's per-partition counts parsed, a wrong line is an error")
{
  std::string counts = " 3 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1";
  auto got =
      slurm::parse_job_ends("gpu-a100 5" + counts + "\n\ngpu-v100 1 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0\n");
  REQUIRE(got);
  REQUIRE(got->size() == 2);
  CHECK(got->at("gpu-a100").jobs == 5);
  CHECK(got->at("gpu-a100").counts[0] == 3);
  CHECK(got->at("gpu-a100").counts[model::EndRatios::steps] == 1);
  CHECK(got->at("gpu-v100").counts[10] == 1);
  CHECK(slurm::parse_job_ends("").value().empty());
  CHECK_FALSE(slurm::parse_job_ends("gpu 5 3 1"));                  // too few counts
  CHECK_FALSE(slurm::parse_job_ends("gpu 6" + counts));             // counts add up to 5
  CHECK_FALSE(slurm::parse_job_ends("gpu 5 x" + counts.substr(2))); // not a number
}

TEST_CASE("job ends: the command runs under /bin/sh against a fake sacct and counts each partition's ratios")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("rv-job-ends-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Partition|ElapsedRaw (s)|TimelimitRaw (min), as sacct -P prints them: a job at 5 % of its
  // hour, one at half, one that hit its limit, one past it (counted at the limit), one that never
  // ran, one without a limit, another partition's, and a row with a name that is not a number.
  {
    std::ofstream(dir / "sacct") << "#!/bin/sh\n"
                                    "echo \"$*\" > args\n"
                                    "printf '%s\\n' 'gpu|180|60' 'gpu|1800|60' 'gpu|3600|60' 'gpu|3700|60' 'gpu|0|60' "
                                    "'gpu|100|UNLIMITED' 'cpu|30|10' 'gpu|x|60'\n";
  }
  fs::permissions(dir / "sacct", fs::perms::owner_all);
  const auto [rc, out] = run_job_ends(dir);
  REQUIRE(rc == 0);
  std::stringstream args;
  args << std::ifstream(dir / "args").rdbuf();
  CAPTURE(out);
  auto got = slurm::parse_job_ends(out);
  REQUIRE(got);
  REQUIRE(got->count("gpu") == 1);
  const auto& gpu = got->at("gpu");
  CHECK(gpu.jobs == 4);
  CHECK(gpu.counts[1] == 1);                       // 180 s of 60 min: 0.05
  CHECK(gpu.counts[10] == 1);                      // half
  CHECK(gpu.counts[model::EndRatios::steps] == 2); // at and past the limit
  CHECK(got->at("cpu").counts[1] == 1);            // 30 s of 10 min
  CHECK(args.str().find("-a -X -n -P -S now-1days") != std::string::npos);
  // sacct failing (accounting unreachable) is the command's failure, not an empty answer.
  {
    std::ofstream(dir / "sacct") << "#!/bin/sh\necho 'sacct: error: Problem talking to the database' >&2\nexit 1\n";
  }
  CHECK(run_job_ends(dir).first != 0);
  fs::remove_all(dir);
}

TEST_CASE("plan: where the partition's jobs end early, a queued strategy's wait is rv's expected one, with why")
{
  auto cluster = test::campus();
  for (auto& p : cluster.partitions) { // as discovery lists them
    for (const auto& n : cluster.nodes) {
      if (n.partitions.front() == p.name) {
        p.nodes.push_back(n.name);
      }
    }
  }
  model::QueueSnapshot queue;
  queue.known = true;
  queue.now_epoch = 2'000'000;
  for (auto& n : cluster.nodes) {
    if (n.partitions.front() != "gpu-v100") {
      continue;
    }
    n.gpus_used = {{"v100", 4}};
    n.gpus_used_known = true;
    model::QueuedJob j;
    j.id = "run-" + n.name;
    j.running = true;
    j.partition = "gpu-v100";
    j.nodes = {n.name};
    j.gpus_per_node = {{"v100", 4}};
    j.gpus_known = true;
    j.start_in_s = -60;       // a minute of
    j.end_in_s = 36'000 - 60; // a 10 h limit
    queue.jobs.push_back(j);
  }
  model::JobRequest req;
  req.time_s = 7200;
  req.gpus = 4;
  req.gpu_type = "v100";
  PlanOptions opts;
  auto profile = test::campus_profile();
  auto cands = enumerate_candidates(cluster, profile, req, opts);
  REQUIRE(cands);
  auto windows = make_windows(test::fake_probes(cands->list, 0), cands->list, opts); // Slurm: in 6 h
  windows.queue = queue;
  auto v100_waits = [&](const model::Cluster& c) {
    auto p = plan(c, profile, req, windows, opts);
    REQUIRE(p);
    std::vector<std::pair<std::int64_t, std::string>> out;
    for (const auto& s : p->strategies) {
      if (s.gpu_type == "v100" && s.est_wait_s) {
        std::string why;
        for (const auto& r : s.reasons) {
          why += r + "\n";
        }
        // The estimator is recorded with the prediction (the history corrects each from its own).
        CHECK(s.wait_model ==
              (why.find("expected to start") != std::string::npos ? model::WaitModel::replay : model::WaitModel::plan));
        out.emplace_back(*s.est_wait_s, why);
      }
    }
    REQUIRE_FALSE(out.empty());
    return out;
  };
  for (const auto& [wait, why] : v100_waits(cluster)) {
    CHECK(wait == 21'600); // no ratios read: Slurm's plan stands
    CHECK(why.find("expected to start") == std::string::npos);
  }
  cluster.end_ratios["gpu-v100"] = ratios({{2, 40}}); // jobs end at 10-15 % of their limits
  const auto waits = v100_waits(cluster);
  for (const auto& [wait, why] : waits) {
    // Between 10 and 15 % of the running jobs' 10 h, a minute of it gone: which point depends on
    // how many of the four nodes the strategy needs (the first to free, or the last).
    CHECK(wait >= 3'600 - 60);
    CHECK(wait <= 5'400 - 60);
    CHECK(why.find("expected to start in") != std::string::npos);
    CHECK(why.find("Slurm's plan, every job to its limit, says 6h") != std::string::npos);
  }
  // One node of four: the first of four ends, sooner than one job's median (12.5 %).
  CHECK(std::min_element(waits.begin(), waits.end())->first < 4'500 - 60);
}

TEST_CASE("end ratio quantiles: the distribution past what was used, in order, the median is expected_end_ratio")
{
  model::EndRatios even;
  for (std::size_t i = 0; i < model::EndRatios::steps; ++i) {
    even.counts[i] = 10;
    even.jobs += 10;
  }
  CHECK(end_ratio_quantile(even, 0, 0.25) == doctest::Approx(0.25));
  CHECK(end_ratio_quantile(even, 0, 0.75) == doctest::Approx(0.75));
  CHECK(end_ratio_quantile(even, 0.5, 0.5) == doctest::Approx(expected_end_ratio(even, 0.5)));
  double last = 0;
  for (double q = 0.01; q < 1; q += 0.07) {
    const double r = end_ratio_quantile(even, 0.3, q);
    CHECK(r >= last);
    CHECK(r >= 0.3);
    last = r;
  }
  // The replays' draws in one pass are the same quantiles, one by one.
  for (const auto& r : {even, ratios({{1, 15}, {7, 4}, {model::EndRatios::steps, 15}}), ratios({{0, 2}})}) {
    for (double used : {0.0, 0.07, 0.5}) {
      const auto all = end_ratio_quantiles(r, used, k_replays);
      REQUIRE(all.size() == static_cast<std::size_t>(k_replays));
      for (int k = 0; k < k_replays; ++k) {
        CHECK(all[static_cast<std::size_t>(k)] == doctest::Approx(end_ratio_quantile(r, used, (k + 0.5) / k_replays)));
      }
    }
  }
  // Half the jobs ended early (5-10 %), half hit their limits: the upper quantiles are the limit.
  const auto split = ratios({{1, 15}, {model::EndRatios::steps, 15}});
  CHECK(end_ratio_quantile(split, 0, 0.25) == doctest::Approx(0.075));
  CHECK(end_ratio_quantile(split, 0, 0.75) == doctest::Approx(1.0));
}

TEST_CASE("expected wait: a start that needs several jobs to end is the median of the last of them, not of one")
{
  // One node of 4 A100s held by four 1-GPU jobs, all started now with an hour's limit; jobs end at
  // 10-15 % of their limits (360-540 s). A whole node waits for the last of the four: its median is
  // the 0.84 quantile of one (0.5^(1/4)), 511 s, not one job's median, 450 s.
  Fixture f;
  f.cluster.nodes = {a100_node("n1", 4)};
  f.cluster.partitions[0].nodes = {"n1"};
  f.queue.jobs.clear();
  for (int i = 0; i < 4; ++i) {
    auto j = running(fmt::format("j{}", i), "n1", 0, 3600);
    j.gpus_per_node = {{"a100", 1}};
    f.queue.jobs.push_back(j);
  }
  auto whole = expected_wait(f.cluster, f.queue, f.c, 600, 3600);
  REQUIRE(whole);
  CHECK(whole->wait_s > 490);
  CHECK(whole->wait_s < 530);
  // One GPU waits for the first of the four: the 0.16 quantile, 389 s.
  f.c.gpus_per_node = 1;
  auto one = expected_wait(f.cluster, f.queue, f.c, 600, 3600);
  REQUIRE(one);
  CHECK(one->wait_s > 370);
  CHECK(one->wait_s < 410);
  // The same snapshot gives the same answer (the draws are fixed per job).
  CHECK(expected_wait(f.cluster, f.queue, f.c, 600, 3600)->wait_s == one->wait_s);
  CHECK(one->why.find("the median of 33 replays") != std::string::npos);
}

TEST_CASE("expected waits: one candidate's draws answer each of its strategies as a fresh model would")
{
  Fixture f;
  f.queue.jobs.push_back(pending("3", "n1", 3540, 3600));
  const QueueIndex index(f.cluster, f.queue);
  // The plan's draws are shared by its candidates: another candidate (2 GPUs per node) draws the
  // same jobs first, and this one's answers are still a fresh model's.
  EndDraws draws(f.cluster);
  auto two = f.c;
  two.gpus_per_node = 2;
  const ExpectedWaits other(f.cluster, index, two, draws);
  REQUIRE(other.at(600, 3540).has_value());
  const auto* drawn = draws.ends(f.queue.jobs[0]);
  REQUIRE(drawn != nullptr);
  CHECK(draws.ends(f.queue.jobs[0]) == drawn); // drawn once: the same draws, not new ones
  const ExpectedWaits waits(f.cluster, index, f.c, draws);
  for (auto [walltime, slurm] : {std::pair<std::int64_t, std::int64_t>{600, 3540}, {3600, 3540 + 3600}, {60, 7200}}) {
    CAPTURE(walltime);
    const auto shared = waits.at(walltime, slurm);
    const auto fresh = expected_wait(f.cluster, f.queue, f.c, walltime, slurm);
    REQUIRE(shared.has_value() == fresh.has_value());
    if (shared) {
      CHECK(shared->wait_s == fresh->wait_s);
      CHECK(shared->why == fresh->why);
    }
  }
  CHECK_FALSE(waits.at(600, 0)); // Slurm says now: nothing sooner
  // A running job's ends are drawn past what it has used, never past its limit; a pending job's
  // runs are never past its limit either.
  for (auto end : *drawn) {
    CHECK(end >= 0);
    CHECK(end <= 3600 - 60);
  }
  for (auto run : *draws.ends(f.queue.jobs[2])) {
    CHECK(run >= 1);
    CHECK(run <= 3600);
  }
}

TEST_CASE("expected wait: a partition with too few ended jobs uses the cluster's, and says so")
{
  Fixture f;
  f.cluster.end_ratios["gpu"] = ratios({{2, 5}});    // 5 ended on this partition: too few alone
  f.cluster.end_ratios["other"] = ratios({{2, 25}}); // 25 elsewhere on the cluster
  auto e = expected_wait(f.cluster, f.queue, f.c, 600, 3540);
  REQUIRE(e);
  CHECK(e->wait_s == 390);
  CHECK(e->why.find("too few on gpu: the cluster's 30 ended jobs") != std::string::npos);
  f.cluster.end_ratios["other"] = ratios({{2, 10}}); // 15 in all: still too few
  CHECK_FALSE(expected_wait(f.cluster, f.queue, f.c, 600, 3540));
}

TEST_CASE("job ends: the count of sacct's real rows (22.05 and 24.11, captured) matches one made row by row here")
{
  namespace fs = std::filesystem;
  for (const std::string version : {"22.05", "24.11"}) {
    CAPTURE(version);
    const auto data = fs::absolute(fs::path(RV_TEST_DATA_DIR) / "slurm" / version / "sacct_job_ends.txt");
    const auto dir = fs::temp_directory_path() / ("rv-job-ends-cap-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    {
      std::ofstream(dir / "sacct") << "#!/bin/sh\ncat '" << data.string() << "'\n";
    }
    fs::permissions(dir / "sacct", fs::perms::owner_all);
    const auto [rc, out] = run_job_ends(dir);
    fs::remove_all(dir);
    REQUIRE(rc == 0);
    auto got = slurm::parse_job_ends(out);
    REQUIRE(got);
    // The same count, row by row: Partition|ElapsedRaw seconds|TimelimitRaw minutes.
    std::map<std::string, model::EndRatios> want;
    std::istringstream rows(testing::read_data(data));
    int ran = 0;
    for (std::string row; std::getline(rows, row);) {
      const auto a = row.find('|'), b = row.find('|', a + 1);
      REQUIRE(b != std::string::npos);
      const long elapsed = std::stol(row.substr(a + 1, b - a - 1));
      const long limit_min = std::stol(row.substr(b + 1));
      if (elapsed <= 0 || limit_min <= 0) {
        continue;
      }
      ++ran;
      auto& r = want[row.substr(0, a)];
      const auto step = std::min<long>(model::EndRatios::steps, elapsed * model::EndRatios::steps / (limit_min * 60));
      ++r.counts[static_cast<std::size_t>(step)];
      ++r.jobs;
    }
    CHECK(ran > 20); // the capture holds jobs that ran, not only cancelled pending ones
    REQUIRE(got->size() == want.size());
    for (const auto& [part, r] : want) {
      CAPTURE(part);
      REQUIRE(got->count(part) == 1);
      CHECK(got->at(part).jobs == r.jobs);
      CHECK(got->at(part).counts == r.counts);
    }
  }
}
