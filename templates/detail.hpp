#pragma once
// Internal pieces shared by the template files; not part of the templates API.

#include "core/model/plan.hpp"
#include "templates/launcher.hpp"
#include "templates/render.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::templates::detail {

using Vars = std::vector<std::pair<std::string_view, std::string>>;

// Replaces every `{{name}}` in `text` with its value; a placeholder with no value is a bug in a
// template, so it throws std::logic_error (tests render every template).
std::string fill(std::string_view text, const Vars& vars);

// Quotes a value for an `#SBATCH` line: sbatch reads double quotes and backslashes itself.
std::string sbatch_quote(std::string_view value);

// Validated, derived inputs every template part reads.
struct Context {
  const model::Strategy& strategy;
  const model::JobRequest& request;
  const RenderOptions& options;
  std::string job_name;
  std::string signal; // normalised, e.g. USR1
  std::int64_t signal_lead_s = 0;
  LauncherInjection launch; // the command as it runs
  bool multi_node = false;
  bool checkpoint = false;
  bool step = false;   // a step joining a running allocation (`rv up`): no guard, no batch trap
  int local_ranks = 1; // processes per node that share the CPUs
};

// Checks every input render() takes; the first problem found, as a usage error with a hint. An
// empty command is refused unless `shell_step` (rv up's interactive shell joins with no command).
Result<bool> check_inputs(const model::Strategy& s, const model::JobRequest& r, const RenderOptions& o,
                          bool shell_step = false);
// Checks an --output path: relative, no `..`, no line breaks.
Result<bool> check_output_path(std::string_view path);
// Checks a job name, request id or project key: [A-Za-z0-9._-]{1,128}, not starting with - or .
Result<bool> check_name(std::string_view what, std::string_view value, bool allow_empty);

// `#!/bin/bash`, the #SBATCH lines and the header comment.
std::string sbatch_header(const Context& ctx);
// Shell functions every script uses, the guard, the environment, modules, venv, cd.
std::string preamble(const Context& ctx);
// The fan-out race guard: functions and the call (empty without a request id).
std::string guard(const Context& ctx);
// The in-job GPU preflight (templates/preflight.cpp; "" when off, in a step, or without GPUs).
std::string preflight(const Context& ctx);
// `_rv_pf_verdict LINE`: writes the preflight's verdict file (preflight() renders it; the container
// phase does when preflight() does not).
std::string preflight_verdict_function(const Context& ctx);
// Containers (templates/container.cpp, docs/containers.md): the variables and `_rv_ct` ("" without
// --container); the batch script's image pull and the preflight inside the container; what runs
// the command ("_rv_ct " or "", in_task: inside a multi-node srun task); Pyxis's srun options.
std::string container_setup(const Context& ctx);
std::string container_phase(const Context& ctx);
std::string container_prefix(const Context& ctx, bool in_task);
std::string container_srun_flags(const Context& ctx);
// What a container job mounts of rv's own (templates/container.cpp): the work directory, the scratch
// (cache) root and rv's root, each once, none inside another (it is mounted with it); the user's
// --container-mount's come after them.
std::vector<std::string> container_own_mounts(const RenderOptions& o);
// The names a script text exports (`export A=... B` lines, `export -f` aside), in order: what rv's
// environment and a multi-node task set, read from their templates (preamble.cpp, multi_node.cpp).
std::vector<std::string> exported_names(std::string_view script);
std::vector<std::string> environment_names(); // the job's environment (preamble.cpp)
std::vector<std::string> task_names();        // what each multi-node task sets (multi_node.cpp)
// The GPU watchdog (templates/watchdog.cpp): the sampler and the verdict started in the batch
// shell, or the warning notice in `rv up`'s step; "" when off or without GPUs.
std::string watchdog(const Context& ctx);
// The line of a multi-node srun task that starts its node's sampler ("" when off).
std::string watchdog_task(const Context& ctx);
// The part that runs the command, per template.
std::string single_body(const Context& ctx);
std::string multi_node_setup(const Context& ctx);
std::string multi_node_body(const Context& ctx);
std::string checkpoint_body(const Context& ctx);
// A study's worker loop (templates/study.cpp): claims and runs tasks until none is left.
std::string study_body(const Context& ctx);
// `_rv_job_alive JOB`: whether a job still lives as Slurm says (templates/study.cpp); this job's own
// id is an earlier run of it, over; squeue failing for another reason than an unknown job: alive.
std::string_view job_alive_function();
// Copies the --output paths to RV_OUTPUT_DIR after the command ("" without outputs).
std::string copy_outputs(const Context& ctx);
// Notifications (notify.cpp): the webhook functions, what runs once the job has won the race
// (Slurm mail for fan-outs, the start event, the TERM trap), the end and resubmission events;
// each "" when not asked for.
std::string notify_functions(const Context& ctx);
std::string notify_start(const Context& ctx);
std::string notify_end(const Context& ctx);
std::string notify_resubmit(const Context& ctx);
// `srun ...` line running `_rv_task` once per node (multi-node and checkpoint multi-node).
std::string srun_line(const Context& ctx);

} // namespace rv::templates::detail
