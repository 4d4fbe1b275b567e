// Multi-node: one srun task per node; each task sets its node rank and runs the command.

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

namespace rv::templates::detail {
namespace {

constexpr std::string_view k_setup = R"sh(
# ---- multi-node rendezvous: the first node of the allocation is the master ----
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1)
[ -n "$MASTER_ADDR" ] || MASTER_ADDR="${SLURMD_NODENAME:-$(hostname)}"
export MASTER_ADDR
export RV_NNODES="${SLURM_NNODES:-{{nodes}}}"
# shellcheck disable=SC2090  # passed to the tasks verbatim
export RV_COMMAND

# Runs inside each srun task (one per node), so SLURM_NODEID is this node's.
# shellcheck disable=SC2317  # called by srun through export -f
_rv_task() {
  export NODE_RANK="$SLURM_NODEID" RV_NODE_RANK="$SLURM_NODEID" RANK="$SLURM_NODEID"
  export LOCAL_RANK=0 WORLD_SIZE="$RV_NNODES"
  _rv_log "node $NODE_RANK/$RV_NNODES on ${SLURMD_NODENAME:-$(hostname)}: master $MASTER_ADDR:$MASTER_PORT"
{{watchdog}}{{task_run}}
}
export -f _rv_log _rv_task
)sh";

constexpr std::string_view k_body = R"sh(
# ---- run (multi-node) ----
_rv_log "job $SLURM_JOB_ID: running the command on $RV_NNODES nodes"
{{srun}}
_rv_status=$?
_rv_log "srun exited with status $_rv_status"
{{outputs}}{{notify}}exit "$_rv_status"
)sh";

} // namespace

std::vector<std::string> task_names()
{
  return exported_names(k_setup);
}

std::string srun_line(const Context& ctx)
{
  const auto logs = ctx.options.log_dir + "/" + ctx.job_name + "-%j.node%t";
  return fmt::format("srun --nodes={0} --ntasks={0} --ntasks-per-node=1 --cpus-per-task={1} "
                     "--kill-on-bad-exit=1 --export=ALL \\\n"
                     "  --output={2} --error={3} \\\n"
                     " {4} bash -c _rv_task",
                     ctx.strategy.nodes, ctx.strategy.cpus_per_task, proc::shell_quote(logs + ".out"),
                     proc::shell_quote(logs + ".err"), container_srun_flags(ctx));
}

std::string multi_node_setup(const Context& ctx)
{
  const auto run = container_prefix(ctx, true); // Apptainer: `_rv_ct ` (a function: no exec)
  std::string task_run =
      ctx.checkpoint ? "  RV_IN_TASK=1\n  _rv_run_group " + run + "bash -c \"$RV_COMMAND\"\n  exit \"$_rv_status\""
      : run.empty()  ? "  exec bash -c \"$RV_COMMAND\""
                     : "  " + run + "bash -c \"$RV_COMMAND\"\n  exit $?";
  return fill(
      k_setup,
      {{"nodes", std::to_string(ctx.strategy.nodes)}, {"watchdog", watchdog_task(ctx)}, {"task_run", task_run}});
}

std::string multi_node_body(const Context& ctx)
{
  return fill(k_body, {{"srun", srun_line(ctx)}, {"outputs", copy_outputs(ctx)}, {"notify", notify_end(ctx)}});
}

} // namespace rv::templates::detail
