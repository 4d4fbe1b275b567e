// `rv gpu`: nvidia-smi on every node of a running request's job (app/node/gpu.hpp, docs/gpu.md).

#include "app/node/gpu.hpp"
#include "cli/commands.hpp"

#include <fmt/format.h>

namespace rv::cli {
using namespace rv::app;
namespace {

struct GpuFlags {
  std::string key;
  int node = -1;
  std::int64_t watch = -1; // --watch[=SECONDS]; -1 = once
};

Result<int> run_gpu(const GpuFlags& flags, Context& ctx)
{
  GpuOptions opts{flags.key, flags.node, std::nullopt};
  if (flags.watch != -1) {
    opts.watch = flags.watch;
  }
  if (flags.node < -1) {
    return fail(ErrorCode::usage, fmt::format("--node {} is not a node index", flags.node),
                "--node 0 is the first node of the job");
  }
  RV_TRY(real, ctx.make_env_for_request(opts.key)); // the request's own cluster
  return show_gpus(real->env, opts);
}

} // namespace

void setup_gpu(CLI::App& app, Context& ctx)
{
  auto flags = std::make_shared<GpuFlags>();
  auto* cmd = app.add_subcommand("gpu", "nvidia-smi on every node of a running request (default: the newest)");
  cmd->add_option("request", flags->key, "request id (or prefix), job id, or job name");
  cmd->add_option("--node", flags->node, "only node K of the job (0 = the first)")->type_name("K");
  auto* watch = cmd->add_flag("--watch{2}", flags->watch, "refresh every 2 s (--watch=N: every N s) until Ctrl-C");
  cmd->callback([&ctx, flags, watch] {
    if (watch->count() == 0) {
      flags->watch = -1; // CLI11 leaves 0 in an integer flag that was not given
    }
    ctx.action = [&ctx, flags] { return run_gpu(*flags, ctx); };
  });
}

} // namespace rv::cli
