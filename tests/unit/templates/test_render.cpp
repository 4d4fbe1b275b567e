#include "templates/render.hpp"

#include "cases.hpp"
#include "golden.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace rv::templates;
using rv::templates::testing::golden_cases;

namespace {

// The #SBATCH directives of a script: option -> value, quotes undone ("" for a bare flag).
// A directive given twice is reported by `twice`.
std::map<std::string, std::string> directives(const std::string& script, std::vector<std::string>& twice)
{
  std::map<std::string, std::string> out;
  std::istringstream in(script);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("#SBATCH --")) {
      continue;
    }
    auto opt = line.substr(std::string_view("#SBATCH --").size());
    std::string key = opt.substr(0, opt.find('=')), value;
    if (auto eq = opt.find('='); eq != std::string::npos) {
      auto raw = opt.substr(eq + 1);
      REQUIRE_MESSAGE((raw.size() >= 2 && raw.front() == '"' && raw.back() == '"'), line);
      for (std::size_t i = 1; i + 1 < raw.size(); ++i) {
        if (raw[i] == '\\' && i + 2 < raw.size()) {
          ++i;
        }
        value += raw[i];
      }
    }
    if (!out.emplace(key, value).second) {
      twice.push_back(key);
    }
  }
  return out;
}

// `[D-]HH:MM:SS` as seconds.
std::int64_t slurm_seconds(const std::string& v)
{
  std::int64_t days = 0;
  std::string rest = v;
  if (auto dash = v.find('-'); dash != std::string::npos) {
    days = std::stoll(v.substr(0, dash));
    rest = v.substr(dash + 1);
  }
  int h = 0, m = 0, sec = 0;
  REQUIRE_MESSAGE(std::sscanf(rest.c_str(), "%d:%d:%d", &h, &m, &sec) == 3, v);
  return days * 86400 + h * 3600 + m * 60 + sec;
}

// What every rendered script must say, whatever its golden file holds: each #SBATCH directive
// matches the strategy, the request and the options, and nothing else is asked of Slurm.
// (`bash -n` and shellcheck of every case: test_lint.cpp.)
void check_script_properties(const rv::templates::testing::Case& c, const std::string& script)
{
  const auto& s = c.strategy;
  const auto& r = c.request;
  const auto& o = c.options;
  CHECK(script.starts_with("#!/bin/bash\n"));
  std::vector<std::string> twice;
  auto d = directives(script, twice);
  CHECK(twice.empty());
  std::string got; // the directives present, before d[] below adds empty ones
  for (const auto& kv : d) {
    got += kv.first + " ";
  }
  std::set<std::string> expected{"job-name",      "partition", "nodes", "ntasks", "ntasks-per-node",
                                 "cpus-per-task", "mem",       "time",  "output", "error"};
  CHECK(d["job-name"] == r.job_name);
  CHECK(d["partition"] == s.partition);
  if (!s.gres.empty()) {
    expected.insert("gres");
    CHECK(d["gres"] == s.gres);
  } else {
    expected.insert("gpus-per-node");
    CHECK(d["gpus-per-node"] == (s.gpu_type.empty() ? "" : s.gpu_type + ":") + std::to_string(s.gpus_per_node));
  }
  CHECK(d["nodes"] == std::to_string(s.nodes));
  CHECK(d["ntasks"] == std::to_string(s.nodes)); // one task per node
  CHECK(d["ntasks-per-node"] == "1");
  CHECK(d["cpus-per-task"] == std::to_string(s.cpus_per_task));
  CHECK(d["mem"] == std::to_string(s.mem_mb_per_node) + "M");
  CHECK(slurm_seconds(d["time"]) == s.walltime_s);
  if (s.time_min_s > 0) {
    expected.insert("time-min");
    CHECK(slurm_seconds(d["time-min"]) == s.time_min_s);
  }
  if (!s.constraint.empty()) {
    expected.insert("constraint");
    CHECK(d["constraint"] == s.constraint);
  }
  if (!r.exclude_nodes.empty()) {
    expected.insert("exclude");
    std::string joined;
    for (const auto& n : r.exclude_nodes) {
      joined += (joined.empty() ? "" : ",") + n;
    }
    CHECK(d["exclude"] == joined);
  }
  if (!r.account.empty()) {
    expected.insert("account");
    CHECK(d["account"] == r.account);
  }
  if (!r.qos.empty()) {
    expected.insert("qos");
    CHECK(d["qos"] == r.qos);
  }
  if (!o.request_id.empty()) {
    expected.insert("comment");
    CHECK(d["comment"] == "rv:" + o.request_id); // how rv finds its jobs again
  }
  CHECK(d["output"] == o.log_dir + "/%x-%j.out");
  CHECK(d["error"] == o.log_dir + "/%x-%j.err");
  if (!o.workdir.empty()) {
    expected.insert("chdir");
    CHECK(d["chdir"] == o.workdir); // Slurm's WorkDir: what snapshot pruning reads (#16)
  }
  if (s.kind == rv::model::StrategyKind::checkpoint) {
    expected.insert({"signal", "open-mode"});
    auto sig = normalize_signal(o.signal);
    auto lead = effective_signal_lead(s.walltime_s, o.signal_lead_s);
    REQUIRE(sig.has_value());
    REQUIRE(lead.has_value());
    CHECK(d["signal"] == "B:" + *sig + "@" + std::to_string(*lead)); // B: the batch shell traps it
    CHECK(d["open-mode"] == "append");                               // segments append to one log
    if (o.use_requeue) {
      expected.insert("requeue");
      CHECK(d["requeue"].empty());
    }
    CHECK(script.find("export RV_TOTAL_REQUESTED_S=" + std::to_string(s.total_time_s) + "\n") != std::string::npos);
  }
  std::string want;
  for (const auto& k : expected) {
    want += k + " ";
  }
  CHECK(got == want); // nothing asked of Slurm that the case did not call for
}

} // namespace

TEST_CASE("templates: every case matches its golden file")
{
  for (const auto& c : golden_cases()) {
    SUBCASE(c.name.c_str())
    {
      auto script = render(c.strategy, c.request, c.options);
      REQUIRE_MESSAGE(script.has_value(), script.error().message);
      rv::testing::check_golden(std::string(RV_TEST_DATA_DIR) + "/templates/" + c.name + ".sbatch.golden", *script);
      check_script_properties(c, *script);
    }
  }
}

TEST_CASE("templates: #SBATCH lines come from the strategy and request")
{
  auto c = golden_cases().front();
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.starts_with("#!/bin/bash\n"));
  CHECK(script.find("#SBATCH --partition=\"gpu-a100\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --gres=\"gpu:a100:2\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --constraint=\"a100_80gb&nvlink|\\\"odd\\\"\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --exclude=\"a100-3,a100-4\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --mem=\"65536M\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --time=\"02:00:00\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --comment=\"rv:r20261122-ab12\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --output=\"/scratch/alice/.rv/logs/%x-%j.out\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --requeue") == std::string::npos);
  // torchrun with 2 GPUs per node: 16 CPUs shared by 2 ranks.
  CHECK(script.find("export OMP_NUM_THREADS=8 ") != std::string::npos);
  CHECK(script.find("--master_port=\"$MASTER_PORT\"") != std::string::npos);
}

// #16: snapshot pruning keeps a snapshot that a queued or running job's WorkDir (squeue %Z) points
// into. Without --chdir, WorkDir was the login shell's directory ($HOME over ssh) and never matched,
// so a re-fan-out round (a new request id running from the first round's snapshot) was unprotected.
TEST_CASE("templates: a job with a working directory is submitted with --chdir, so Slurm's WorkDir names it")
{
  auto c = golden_cases().front();
  c.options.workdir = "/home/u/.rv/workspaces/p-1/main/snapshots/1700000000-abcd1234/src dir";
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.find("#SBATCH --chdir=\"/home/u/.rv/workspaces/p-1/main/snapshots/1700000000-abcd1234/src dir\"\n") !=
        std::string::npos);
  CHECK(script.find("\ncd -- '/home/u/.rv/workspaces/p-1/main/snapshots/1700000000-abcd1234/src dir'") !=
        std::string::npos); // and the script still goes there itself
  c.options.workdir.clear();
  CHECK(render(c.strategy, c.request, c.options).value().find("#SBATCH --chdir") == std::string::npos);
}

// rv run --after (app/run/after.hpp): the dependency, and Slurm cancels the job when it can never be met.
TEST_CASE("templates: a dependency comes with --kill-on-invalid-dep=yes, a line break in it is refused")
{
  auto c = golden_cases().front();
  CHECK(render(c.strategy, c.request, c.options).value().find("--dependency") == std::string::npos);
  c.options.dependency = "afterok:812?afterok:813";
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.find("#SBATCH --dependency=\"afterok:812?afterok:813\"\n#SBATCH --kill-on-invalid-dep=\"yes\"\n") !=
        std::string::npos);
  c.options.dependency = "afterok:1\n#SBATCH --x";
  CHECK_FALSE(render(c.strategy, c.request, c.options).has_value());
}

// A task file's setup (docs/taskfile.md): after the environment and the cd, before the command.
TEST_CASE("templates: the task's set-up runs in the job's directory after its environment")
{
  auto c = golden_cases().front();
  c.options.workdir = "/w";
  c.options.env = {{"SEED", "7"}};
  c.options.task_setup = "echo task-setup-line\n";
  auto script = render(c.strategy, c.request, c.options).value();
  const auto setup = script.find("echo task-setup-line");
  REQUIRE(setup != std::string::npos);
  CHECK(script.find("export SEED=") < setup);
  CHECK(script.find("\ncd -- /w ") < setup);
  CHECK(setup < script.find("The command exactly as typed"));
}

TEST_CASE("templates: untyped strategies ask for GPUs per node")
{
  auto c = golden_cases().front();
  c.strategy.gres.clear();
  c.strategy.gpu_type.clear();
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.find("#SBATCH --gpus-per-node=\"2\"\n") != std::string::npos);
  CHECK(script.find("--gres") == std::string::npos);
}

TEST_CASE("templates: a plain command gets all CPUs as OpenMP threads")
{
  auto c = golden_cases().front();
  c.options.command = "python train.py";
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.find("export OMP_NUM_THREADS=16 ") != std::string::npos);
}

TEST_CASE("templates: checkpoint scripts signal the batch shell and requeue")
{
  for (const auto& c : golden_cases()) {
    if (c.name != "checkpoint_requeue") {
      continue;
    }
    auto script = render(c.strategy, c.request, c.options).value();
    CHECK(script.find("#SBATCH --signal=\"B:USR1@300\"\n") != std::string::npos);
    CHECK(script.find("#SBATCH --requeue\n") != std::string::npos);
    CHECK(script.find("#SBATCH --open-mode=\"append\"\n") != std::string::npos);
    CHECK(script.find("export RV_TOTAL_REQUESTED_S=43200\n") != std::string::npos);
    CHECK(script.find("scontrol requeue \"$SLURM_JOB_ID\"") != std::string::npos);
  }
}

TEST_CASE("templates: the signal lead leaves room for Slurm's jitter")
{
  CHECK(effective_signal_lead(4 * 3600, 300).value() == 300);
  CHECK(effective_signal_lead(240, 600).value() == 150); // 240 - 60 jitter - 30 run
  CHECK(effective_signal_lead(120, 600).value() == 30);
  CHECK_FALSE(effective_signal_lead(119, 600).has_value());
  CHECK_FALSE(effective_signal_lead(3600, 10).has_value());
}
