#include "cli/run_in.hpp"

#include "app/node/in_alloc.hpp"
#include "core/duration.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::cli {

void add_in_flags(CLI::App* cmd, InFlags& f)
{
  cmd->add_option("--in", f.request,
                  "run CMD inside the allocation REQUEST holds (rv up --keep, or a running request), as a step of its "
                  "job: synced and snapshotted as any run, on every node (rv logs/stop REQUEST/step-N)")
      ->type_name("REQUEST");
  cmd->add_flag("--one", f.one, "with --in: one task on one node, not one per node of a multi-node allocation");
}

const std::vector<std::string>& in_allowed_options()
{
  static const std::vector<std::string> allowed = {"--in",  "--one",     "--follow",  "--time",
                                                   "--env", "--workdir", "--no-sync", "--help"};
  return allowed;
}

std::string option_refused_with_in(const CLI::App& cmd)
{
  const auto& allowed = in_allowed_options();
  for (const auto* opt : cmd.get_options()) {
    if (opt->count() == 0) {
      continue;
    }
    const auto names = opt->get_lnames();
    const auto name = names.empty() ? opt->get_name() : "--" + names.front();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return name;
    }
  }
  return {};
}

Result<int> run_in_allocation(const InFlags& in, const JobFlags& job, bool follow, const CLI::App& cmd, Context& ctx)
{
  if (ctx.trailing.empty()) {
    return fail(ErrorCode::usage, "rv run --in needs a command", "rv run --in REQUEST -f python eval.py");
  }
  if (auto refused = option_refused_with_in(cmd); !refused.empty()) {
    return fail(
        ErrorCode::usage,
        fmt::format("rv run --in does not take {}: the command runs in the allocation {} holds", refused, in.request),
        "with --in: -f, --one, --time, --env, --workdir, --no-sync (rv up --keep chooses the resources)");
  }
  app::warn_misplaced_flags(ctx.trailing, job.smart.rv_flags);
  app::InOrder order;
  order.key = in.request;
  order.one = in.one;
  order.follow = follow;
  order.smart = job.smart;
  if (const auto* t = cmd.get_option_no_throw("--time"); t != nullptr && t->count() > 0) {
    auto d = parse_duration(job.plan.time);
    if (!d) {
      return fail(ErrorCode::usage, fmt::format("--time {}: {}", job.plan.time, d.error().message),
                  "e.g. 30m or 2h: the allocation must have that long left");
    }
    order.time_s = *d;
  }
  RV_TRY(env, parse_env_flags(job.env));
  order.env = std::move(env);
  std::string key = in.request;
  RV_TRY(real, ctx.make_env_for_request(key)); // the request's own cluster
  order.key = key;
  return app::run_in(real->env, order, ctx.trailing);
}

} // namespace rv::cli
