// Single node: the batch shell runs the command itself.

#include "templates/detail.hpp"

namespace rv::templates::detail {

std::string single_body(const Context& ctx)
{
  return fill(R"sh(
# ---- run (single node) ----
_rv_log "job $SLURM_JOB_ID on ${SLURMD_NODENAME:-$(hostname)}: running the command"
{{run}}bash -c "$RV_COMMAND"
_rv_status=$?
_rv_log "command exited with status $_rv_status"
)sh",
              {{"run", container_prefix(ctx, false)}}) +
         copy_outputs(ctx) + notify_end(ctx) + "exit \"$_rv_status\"\n";
}

} // namespace rv::templates::detail
