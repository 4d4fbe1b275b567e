#pragma once
// Renders the sbatch script for one strategy of a request. Pure: no commands, no clock, no I/O.
// The protocols the scripts follow (environment, checkpoint segments, fan-out guard) are
// described in docs/templates.md.

#include "core/model/plan.hpp"
#include "core/result.hpp"
#include "templates/container.hpp"
#include "templates/watchdog.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::templates {

// One environment variable exported into the job (never a secret: scripts sit on shared disks).
struct EnvVar {
  std::string name;
  std::string value;
};

// Everything a script needs besides the strategy and the request. Paths are absolute paths on
// the cluster, already resolved (no `~`, no `$USER`); they are quoted, so any byte is allowed,
// except in `log_dir`, which sbatch itself reads (no newline, `"`, `\` or `%`).
// The job's exit code when it started but rv chose another cluster's job, or chose none within
// the gate's wait (docs/multi-cluster.md, docs/exit-codes.md): the command did not run.
inline constexpr int k_not_chosen_exit = 95;

// One task of a study (docs/studies.md): its id, its command ({task} and {NAME} already
// replaced) and its RV_SWEEP_* variables.
struct StudyTask {
  int id = 0;
  std::string command;
  std::vector<EnvVar> env;
};

// A study's worker: the script claims and runs tasks instead of racing for the request; empty
// `tasks` = not a study. Single node only; no checkpoint segments.
struct StudyWorker {
  std::vector<StudyTask> tasks;
  std::vector<std::string> variables; // every RV_SWEEP_* name, unset before each task
  std::int64_t task_time_s = 0;       // a task is claimed only while this much of the allocation is left
  int attempts = 2;                   // per task: 1 + --retries
  bool retry_failed = false;          // a task that failed by its own exit status runs again
  // Across clusters (docs/studies.md, "Across clusters"): take only the tasks rv offers on this
  // cluster (`tasks/<t>/offer`), waiting up to offer_wait_s for one before ending.
  bool offers = false;
  std::int64_t offer_wait_s = 0;
};

struct RenderOptions {
  std::string request_id; // fan-out request; "" = no race guard, no --comment
  int strategy_rank = 0;  // this strategy's place in the plan (1 = best); 0 = unknown
  int strategy_count = 0; // siblings in the request, this one included; 0 = unknown
  // Across clusters: > 0 = once this cluster's claim is won, wait up to this long for rv to choose
  // the cluster (<root>/requests/<id>/go) before running anything; 0 = no gate (one cluster).
  std::int64_t gate_wait_s = 0;
  std::string command;              // the user's shell command line, verbatim
  std::string workdir;              // cd here before running; "" = sbatch's working directory
  std::string log_dir;              // per-user rv log dir: %x-%j.out/.err and per-node logs
  std::string remote_root;          // shared rv root: claims live in <root>/requests/<id>/claim
  std::string checkpoint_root;      // RV_CHECKPOINT_DIR = <root>/<project_key>/<job name>
  std::string project_key;          // keeps checkpoints of equal job names in two projects apart
  std::string output_root;          // RV_OUTPUT_DIR = <root>/<job name>-<job id>
  std::string cache_root;           // HF, pip, uv, torch, triton, vLLM and wandb caches below it
  std::vector<std::string> modules; // `module load` each, in order
  std::string setup;                // shell lines run before the venv is activated (in-job dependency install)
  std::string venv;                 // activate <venv>/bin/activate; "" = none
  std::string dependency; // #SBATCH --dependency (rv run --after): afterok:J?afterok:K, afterany:J:K; "" = none
  std::string task_setup; // shell lines run in the workdir after the environment, before the command
  std::vector<std::string> outputs;      // relative paths copied to RV_OUTPUT_DIR after the command
  std::string signal = "USR1";           // checkpoint signal: USR1, USR2, TERM, INT, HUP, ... (SIG optional)
  std::int64_t signal_lead_s = 300;      // checkpoint: signal this long before the allocation ends
  bool use_requeue = true;               // checkpoint: `scontrol requeue`, else re-sbatch the script
  std::vector<EnvVar> env;               // exported last, overriding rv's defaults
  std::string secrets_file;              // `rv env` secrets: sourced (must exist) before the command; "" = none
  std::vector<std::string> secret_names; // the names secrets_file sets (never their values): a container
                                         // gets the job's value of each over an image's ENV
  bool consume_secrets = false;          // delete secrets_file once read (not by checkpoint segments,
                                         // whose later segments read it again)
  bool nccl_defaults = true;             // multi-node: NCCL/torch defaults, each only if unset
  std::string notify_mail_user;          // Slurm mail (start, end, failure, requeue) to this address; "" = none
  bool notify_webhook = false;           // POST signed events (start, end, resubmitted) from the job; the URL
                                         // and key (`_rv_notify_url`, `_rv_notify_key`) come from secrets_file
  bool preflight = true;                 // GPU preflight on every node before the command (docs/preflight.md)
  std::string preflight_command;         // the site profile's own check, run by bash on each node; "" = none
  bool preflight_required = false;       // a node without nvidia-smi fails instead of being skipped
  WatchdogOptions watchdog;              // GPU samples and --idle-timeout (docs/gpu.md)
  StudyWorker study;                     // a study's worker (docs/studies.md); no tasks = not a study
  // --container (docs/containers.md): the command runs in this image with this runtime; the venv and
  // the in-job dependency install are skipped. nullopt = the node's own environment.
  std::optional<ContainerRun> container;
};

// The script for `strategy` (single node, multi-node, or checkpoint segments when
// strategy.kind is checkpoint), or a usage error with a hint when an input is invalid.
Result<std::string> render(const model::Strategy& strategy, const model::JobRequest& request,
                           const RenderOptions& options);

// The job's environment for a step that joins the running allocation of `strategy` (`rv up`): the
// batch script's own functions, variables, modules, set-up, venv, secrets, --env and `cd`, without
// the #SBATCH lines and the race guard, ending with RV_COMMAND set to options.command as a
// single-node job runs it (launcher flags added). A bash script: source it or run it with bash -c,
// then run `bash -c "$RV_COMMAND"` (or a shell: an empty options.command is allowed here, and only
// here, for rv up's interactive shell). It exits 1 when the secrets file is missing.
Result<std::string> render_step_environment(const model::Strategy& strategy, const model::JobRequest& request,
                                            const RenderOptions& options);

// How `rv run --in` runs a command as a step of a running allocation (docs/templates.md).
struct StepProgram {
  // One task on every node of a multi-node allocation, each with its place in it (NODE_RANK, RANK,
  // WORLD_SIZE, RV_NNODES, MASTER_ADDR, MASTER_PORT) and the launcher flags a multi-node job gets;
  // false: one task, run as a single-node job runs it.
  bool every_node = false;
  // The step's output is also kept in LOG_BASE.out and LOG_BASE.err (with every_node on several
  // nodes: LOG_BASE.node<K>.out/.err), and its exit status in LOG_BASE[.node<K>].status. Absolute, no
  // line break.
  std::string log_base;
};

// The program (bash -c) of each task of such a step: the job's environment as
// render_step_environment sets it (options.command must not be empty), then, with every_node, the
// node's place, then the command, its stdout and stderr kept apart, each copied to its log file;
// it exits with the command's status. MASTER_PORT comes from the job and step ids alone, so every
// node agrees on it and two steps of one job differ.
Result<std::string> render_step(const model::Strategy& strategy, const model::JobRequest& request,
                                const RenderOptions& options, const StepProgram& step);

// What `rv up`'s step runs after render_step_environment: the command (`bash -c "$RV_COMMAND"`) or,
// with `shell`, an interactive shell; in the container when options.container is set.
std::string step_tail(const RenderOptions& options, bool shell);

// Checks an --output path: relative to the job's directory, without `..` or line breaks.
Result<bool> check_output_path(std::string_view path);

// The signal name as Slurm and `kill -s` want it (`USR2` for "sigusr2"), or an error.
Result<std::string> normalize_signal(std::string_view name);

// Seconds before the end at which a checkpoint segment is signalled: the requested lead, cut so
// that at least 30 s of run time remain even when Slurm signals 60 s early; error below 30 s.
Result<std::int64_t> effective_signal_lead(std::int64_t walltime_s, std::int64_t lead_s);

} // namespace rv::templates
