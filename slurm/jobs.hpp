#pragma once
// Slurm's words for a job rv already has: a step in its allocation (`srun --jobid --overlap`), the
// one-record lookups (`scontrol show job|node`), a short test job outside any allocation, and the
// commands rv needs on a login node. Every argv that names a Slurm command is built in slurm/
// (tests/lint/layers.sh greps app/ and cli/ for one).

#include "core/process/runner.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// A Slurm client command as rv runs it, with a timeout: 30 s for a read a person waits on; callers
// where a late answer still beats none (the race's polls, rv status's batch) give 60 s.
inline constexpr std::chrono::seconds k_query_timeout{30};
proc::Command command(std::vector<std::string> argv, std::chrono::seconds timeout = k_query_timeout);
// 60 s, and repeatable (proc::Command): only reads and scancel are patient commands, and each
// is safe to run again on a new held connection when the old one ends under it.
proc::Command patient_command(std::vector<std::string> argv);
// Discovery's reads: independent of one another, so a batch runs them at once (proc::Command's
// `concurrent`): the round trip costs the slowest, not the sum. Repeatable, like every read.
proc::Command concurrent_read(std::vector<std::string> argv);

// A step inside a running job's allocation, beside whatever runs there (--overlap).
struct StepOptions {
  std::string job_id;
  std::size_t nodes = 1;             // --nodes and --ntasks: one task per node
  std::vector<std::string> nodelist; // --nodelist=a,b; empty: Slurm picks
  bool labelled = false;             // --ntasks-per-node=1 --label --quiet: each line names its task
  bool pty = false;                  // --pty: a terminal for an interactive program
  std::string name;                  // --job-name: the step's name, as `squeue --steps` shows it; "" = none
};

// `srun --jobid=J --overlap --nodes=N --ntasks=N [--ntasks-per-node=1 --label --quiet]
// [--job-name=NAME] [--nodelist=L] [--pty] PROGRAM...`
std::vector<std::string> step_argv(const StepOptions& o, const std::vector<std::string>& program);

// `argv` started in the background on the login node, in its own session with every stream
// closed, so that it outlives the connection that started it (`rv run --in` without -f: the srun
// that drives the step stays on the login node until the step ends):
// `sh -c 'setsid nohup "$@" </dev/null >/dev/null 2>&1 &' sh ARGV...`. Its exit status is lost.
std::vector<std::string> detached_argv(const std::vector<std::string>& argv);

// The steps of running job `job_id`: `squeue -h --steps -j J -o '%i|%M|%N|%j'`.
std::vector<std::string> steps_argv(const std::string& job_id);

// One step, as steps_argv prints it.
struct JobStep {
  std::string job_id;  // J of `J.S`
  std::string step_id; // S: a number, or `batch`, `extern`, `interactive`
  std::string name;    // %j: the step's name (the last field: it may hold `|`)
  std::string nodes;   // %N
  std::int64_t elapsed_s = 0;
};

// The rows of steps_argv's output; lines that are not `J.S|...` rows are skipped.
std::vector<JobStep> parse_steps(std::string_view text);

// `scancel J.S`: ends one step of a job, not the job.
std::vector<std::string> cancel_step_argv(const std::string& job_id, const std::string& step_id);

// `scontrol show job ID` (multi-line) or, with one_line, `scontrol -o show job ID`.
std::vector<std::string> show_job_argv(const std::string& job_id, bool one_line = false);

// `scontrol -o show node NODE`.
std::vector<std::string> show_node_argv(const std::string& node);

// A one-task GPU test job outside any allocation (rv doctor): `srun --partition=P --nodes=1
// --ntasks=1 --gres=gpu:1 --time=MIN --immediate=S --job-name=NAME PROGRAM...`.
struct TestJobOptions {
  std::string partition;
  std::string job_name;
  int minutes = 2;
  int immediate_s = 120; // give up when no GPU is free this long
};
std::vector<std::string> test_job_argv(const TestJobOptions& o, const std::vector<std::string>& program);

// The commands rv runs on a login node: needed, and the accounting ones it can do without.
const std::vector<std::string>& required_commands();
const std::vector<std::string>& accounting_commands();

} // namespace rv::slurm
