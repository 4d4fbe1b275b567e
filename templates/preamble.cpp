// The parts every script shares: #SBATCH lines, helper functions, environment, modules, venv.

#include "core/duration.hpp"
#include "core/process/shell.hpp"
#include "core/text.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::templates::detail {
namespace {

using proc::shell_quote;

void directive(std::string& out, std::string_view flag, std::string_view value)
{
  out += fmt::format("#SBATCH --{}={}\n", flag, sbatch_quote(value));
}

// Helpers: logging, the real end of the allocation, a free MASTER_PORT.
constexpr std::string_view k_preamble_functions = R"sh(
_rv_log() { printf 'rv: %s\n' "$*" >&2; }

# The real end of this allocation in epoch seconds. --time-min may have shortened the limit, so
# ask Slurm at run time; fall back to the start plus the requested walltime.
_rv_job_end_time() {
  local end
  end=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/.*[[:space:]]EndTime=\([^[:space:]]*\).*/\1/p' | head -n 1)
  if [ -n "$end" ] && date -d "$end" +%s 2>/dev/null; then return 0; fi
  end=$(squeue -h -j "$SLURM_JOB_ID" -o %e 2>/dev/null | head -n 1)
  if [ -n "$end" ] && date -d "$end" +%s 2>/dev/null; then return 0; fi
  if [ -n "${SLURM_JOB_END_TIME:-}" ]; then echo "$SLURM_JOB_END_TIME"; return 0; fi
  echo $(( $(date +%s) + {{walltime_s}} ))
}

# MASTER_PORT: derived from the job id (jobs sharing a node differ), moved up past ports that
# already accept connections on this node (the batch host is the first node of the allocation).
_rv_master_port() {
  local port=$(( 20000 + ${SLURM_JOB_ID:-0} % 20000 )) tries=0
  while [ "$tries" -lt 100 ] && (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    port=$(( 20000 + (port - 20000 + 1) % 20000 )); tries=$(( tries + 1 ))
  done
  echo "$port"
}
)sh";

constexpr std::string_view k_environment = R"sh(
# ---- environment (docs/templates.md lists every variable) ----
export PYTHONUNBUFFERED=1
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS={{omp_threads}}  # {{cpus}} CPUs per node / {{local_ranks}} local rank(s)
export RV_JOB_NAME={{job_name}}
export RV_REQUEST_ID={{request_id}}
RV_CACHE_ROOT={{cache_root}}
export HF_HOME="$RV_CACHE_ROOT/huggingface"
export PIP_CACHE_DIR="$RV_CACHE_ROOT/pip"
export UV_CACHE_DIR="$RV_CACHE_ROOT/uv"
export TORCH_HOME="$RV_CACHE_ROOT/torch"
export TRITON_CACHE_DIR="$RV_CACHE_ROOT/triton"
export VLLM_CACHE_ROOT="$RV_CACHE_ROOT/vllm"
export WANDB_DIR="$RV_CACHE_ROOT/wandb"
export WANDB_CACHE_DIR="$RV_CACHE_ROOT/wandb/cache"
export WANDB_DATA_DIR="$RV_CACHE_ROOT/wandb/data"
export RV_CHECKPOINT_DIR={{checkpoint_dir}}
export RV_OUTPUT_DIR={{output_root}}/"$RV_JOB_NAME-$SLURM_JOB_ID"
mkdir -p -- "$HF_HOME" "$PIP_CACHE_DIR" "$UV_CACHE_DIR" "$TORCH_HOME" "$TRITON_CACHE_DIR" \
  "$VLLM_CACHE_ROOT" "$WANDB_CACHE_DIR" "$WANDB_DATA_DIR" "$RV_CHECKPOINT_DIR" "$RV_OUTPUT_DIR" ||
  _rv_log "warning: could not create the cache, checkpoint or output directories"
RV_JOB_END_TIME=$(_rv_job_end_time)
export RV_JOB_END_TIME
MASTER_PORT=$(_rv_master_port)
export MASTER_PORT
)sh";

constexpr std::string_view k_module_init = R"sh(
if ! command -v module >/dev/null 2>&1; then
  for _rv_init in /etc/profile.d/lmod.sh /etc/profile.d/modules.sh /usr/share/lmod/lmod/init/bash; do
    if [ -f "$_rv_init" ]; then
      # shellcheck disable=SC1090
      . "$_rv_init"
      break
    fi
  done
fi
)sh";

} // namespace

std::vector<std::string> environment_names()
{
  return exported_names(k_environment);
}

std::string sbatch_header(const Context& ctx)
{
  const auto& s = ctx.strategy;
  const auto& r = ctx.request;
  const auto& o = ctx.options;
  std::string out = "#!/bin/bash\n";
  directive(out, "job-name", ctx.job_name);
  if (!s.partition.empty()) {
    directive(out, "partition", s.partition);
  }
  if (!s.gres.empty()) {
    directive(out, "gres", s.gres);
  } else if (s.gpus_per_node > 0) {
    directive(out, "gpus-per-node",
              s.gpu_type.empty() ? std::to_string(s.gpus_per_node) : fmt::format("{}:{}", s.gpu_type, s.gpus_per_node));
  }
  directive(out, "nodes", std::to_string(s.nodes));
  directive(out, "ntasks", std::to_string(s.nodes));
  directive(out, "ntasks-per-node", "1");
  directive(out, "cpus-per-task", std::to_string(s.cpus_per_task));
  if (s.mem_mb_per_node > 0) {
    directive(out, "mem", fmt::format("{}M", s.mem_mb_per_node));
  }
  directive(out, "time", format_slurm_time(s.walltime_s));
  if (s.time_min_s > 0) {
    directive(out, "time-min", format_slurm_time(s.time_min_s));
  }
  if (!s.constraint.empty()) {
    directive(out, "constraint", s.constraint);
  }
  if (!r.exclude_nodes.empty()) {
    directive(out, "exclude", text::join(r.exclude_nodes, ","));
  }
  if (!r.account.empty()) {
    directive(out, "account", r.account);
  }
  if (!r.qos.empty()) {
    directive(out, "qos", r.qos);
  }
  directive(out, "output", o.log_dir + "/%x-%j.out");
  directive(out, "error", o.log_dir + "/%x-%j.err");
  if (!o.workdir.empty()) {
    // Slurm's WorkDir (squeue %Z) is then the snapshot the job runs from, which is what keeps
    // snapshot pruning away from it (sync/snapshot.hpp, #16); the script still cd's there itself.
    directive(out, "chdir", o.workdir);
  }
  if (!o.request_id.empty()) {
    directive(out, "comment", "rv:" + o.request_id);
  }
  if (!o.dependency.empty()) {
    // rv run --after (docs/taskfile.md, "Pipelines"): Slurm holds the job until the other request's
    // job ends; a dependency that can never be met cancels the job (without this line, Slurm keeps it
    // pending with reason DependencyNeverSatisfied: docs/slurm-quirks.md).
    directive(out, "dependency", o.dependency);
    directive(out, "kill-on-invalid-dep", "yes");
  }
  if (!o.notify_mail_user.empty() && o.strategy_count <= 1) { // fan-outs: notify_start()
    directive(out, "mail-type", "BEGIN,END,FAIL,REQUEUE");
    directive(out, "mail-user", o.notify_mail_user);
  }
  if (ctx.checkpoint) {
    directive(out, "signal", fmt::format("B:{}@{}", ctx.signal, ctx.signal_lead_s));
    directive(out, "open-mode", "append");
    if (o.use_requeue) {
      out += "#SBATCH --requeue\n";
    }
  }
  const char* kind = ctx.checkpoint ? "checkpoint segments" : ctx.multi_node ? "multi-node" : "single node";
  out += fmt::format("# Generated by rv (strategy {}, {}). The command runs in bash exactly as typed;\n"
                     "# see docs/templates.md. No `set -e`: every failure is handled explicitly.\n",
                     s.id.empty() ? "-" : s.id, kind);
  return out;
}

std::string preamble(const Context& ctx)
{
  const auto& o = ctx.options;
  std::string checkpoint_dir = o.checkpoint_root;
  if (!o.project_key.empty()) {
    checkpoint_dir += "/" + o.project_key;
  }
  checkpoint_dir += "/" + ctx.job_name;
  const int omp = std::max(1, ctx.strategy.cpus_per_task / ctx.local_ranks);
  Vars vars{{"walltime_s", std::to_string(ctx.strategy.walltime_s)},
            {"omp_threads", std::to_string(omp)},
            {"cpus", std::to_string(ctx.strategy.cpus_per_task)},
            {"local_ranks", std::to_string(ctx.local_ranks)},
            {"job_name", shell_quote(ctx.job_name)},
            {"request_id", shell_quote(o.request_id)},
            {"cache_root", shell_quote(o.cache_root)},
            {"checkpoint_dir", shell_quote(checkpoint_dir)},
            {"output_root", shell_quote(o.output_root)}};

  std::string out = fill(k_preamble_functions, vars);
  out += notify_functions(ctx);
  if (ctx.checkpoint) {
    out += fmt::format("\n# A checkpoint signal that comes during setup is remembered, not fatal.\n"
                       "_rv_signalled=0\ntrap '_rv_signalled=1' {}\n",
                       ctx.signal);
  }
  if (!ctx.step) {
    out += guard(ctx); // the race is decided before any step joins the allocation
  }
  out += fill(k_environment, vars);
  if (ctx.multi_node && o.nccl_defaults) {
    out += "# NCCL/torch defaults for multi-node runs; each is kept when already set.\n"
           "export NCCL_DEBUG=\"${NCCL_DEBUG:-WARN}\"\n"
           "export NCCL_NET_GDR_LEVEL=\"${NCCL_NET_GDR_LEVEL:-PHB}\"\n"
           "export TORCH_NCCL_ASYNC_ERROR_HANDLING=\"${TORCH_NCCL_ASYNC_ERROR_HANDLING:-1}\"\n";
  }
  out += container_setup(ctx);
  out += preflight(ctx);       // before modules, set-up, venv and secrets: nothing of the user's has run
  out += container_phase(ctx); // the image, then the preflight inside the container
  if (!o.modules.empty()) {
    out += k_module_init;
    for (const auto& m : o.modules) {
      const auto q = shell_quote(m);
      out += fmt::format("module load {0} || {{ _rv_log \"error: module load failed:\" {0}; exit 1; }}\n", q);
    }
  }
  const bool container = o.container.has_value(); // the image brings its own Python: no venv, no install
  if (!o.setup.empty() && !container) {
    out += "\n# Set-up rv runs before the command (dependency install, docs/sync.md).\n" + o.setup;
    if (!o.setup.ends_with("\n")) {
      out += "\n";
    }
  }
  if (!o.venv.empty() && !container) {
    auto activate = shell_quote(o.venv + "/bin/activate");
    out += fmt::format("\n# shellcheck disable=SC1090,SC1091\n"
                       ". {0} || {{ _rv_log \"error: cannot activate the venv: \"{0}; exit 1; }}\n",
                       activate);
  }
  if (!o.secrets_file.empty()) {
    const auto file = shell_quote(o.secrets_file);
    out +=
        fmt::format("\n# Secrets (rv env): a 0600 file rv wrote before sbatch; the values are never in this script.\n"
                    "# shellcheck disable=SC1090,SC1091\n"
                    "if [ -r {0} ]; then . {0}; else _rv_log \"error: the secrets file is missing:\" {0}; exit 1; fi\n",
                    file);
    if (o.consume_secrets && !ctx.checkpoint) {
      out += fmt::format("rm -f -- {}\n", file);
    }
  }
  if (!o.env.empty()) {
    out += "\n# Environment from the rv options: literal values that override the defaults above.\n"
           "# shellcheck disable=SC2016\n{\n";
    for (const auto& e : o.env) {
      out += fmt::format("  export {}={}\n", e.name, shell_quote(e.value));
    }
    out += "}\n";
  }
  if (!o.workdir.empty()) {
    out += fmt::format("\ncd -- {0} || {{ _rv_log \"error: cannot cd to \"{0}; exit 1; }}\n", shell_quote(o.workdir));
  }
  if (!o.task_setup.empty()) {
    out +=
        "\n# The task's set-up (--setup, a task file's `setup`): once per content (docs/taskfile.md).\n" + o.task_setup;
    if (!o.task_setup.ends_with("\n")) {
      out += "\n";
    }
  }
  out += notify_start(ctx);
  out += watchdog(ctx); // after everything that may still stop the job, before the command
  out +=
      fmt::format("\n# The command exactly as typed{}; bash -c interprets it once.\n",
                  ctx.launch.injected.empty() ? std::string()
                                              : fmt::format(", plus {} flags rv added ({})", to_string(ctx.launch.kind),
                                                            text::join(ctx.launch.injected, " ")));
  out += "# shellcheck disable=SC2016,SC2089  # a command line for bash -c, not for this shell\n";
  out += fmt::format("RV_COMMAND={}\n", shell_quote(ctx.launch.command));
  return out;
}

std::string copy_outputs(const Context& ctx)
{
  const auto& outputs = ctx.options.outputs;
  if (outputs.empty()) {
    return {};
  }
  std::string list;
  for (const auto& p : outputs) {
    list += " " + shell_quote(p);
  }
  return fmt::format(R"sh(# ---- --output: copy these paths (relative to the job's directory) to RV_OUTPUT_DIR ----
# shellcheck disable=SC2043  # one path or several
for _rv_out in{}; do
  if [ ! -e "$_rv_out" ]; then
    _rv_log "warning: --output $_rv_out does not exist"
  elif cp -a --parents -- "$_rv_out" "$RV_OUTPUT_DIR/"; then
    _rv_log "copied $_rv_out to $RV_OUTPUT_DIR/$_rv_out"
  else
    _rv_log "warning: could not copy $_rv_out to $RV_OUTPUT_DIR"
  fi
done
)sh",
                     list);
}

} // namespace rv::templates::detail
