// `rv stop`: cancel a request's jobs (siblings included), or every active request's.

#include "app/manage/manage.hpp"
#include "app/manage/step_view.hpp"
#include "cli/commands.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace rv::cli {
using namespace rv::app;
namespace {

struct StopOptions {
  std::string key;
  bool all = false;
  bool yes = false;
};

Result<int> run_stop(const StopOptions& opts, Context& ctx)
{
  std::string key = opts.key;
  RV_TRY(step, parse_step_ref(key));
  if (step) { // REQUEST/step-N: that step alone, not the allocation
    RV_TRY(real, ctx.make_env_for_request(step->request));
    RV_TRY(stopped, stop_step(real->env, step->request, step->n));
    const auto ref = step_ref(step->request, step->n);
    std::fputs((stopped
                    ? fmt::format("stopped {}; the allocation goes on (rv stop {} releases it)\n", ref, step->request)
                    : fmt::format("{} had already ended; nothing to do\n", ref))
                   .c_str(),
               stdout);
    return 0;
  }
  RV_TRY(real, opts.all || key.empty() ? ctx.make_env() : ctx.make_env_for_request(key)); // its own cluster
  RV_TRY(targets, stop_targets(real->env, key, opts.all));
  if (opts.all && !opts.yes && !targets.empty()) {
    if (!::isatty(0)) {
      return fail(ErrorCode::usage,
                  fmt::format("rv stop --all cancels every job of {} active request(s)", targets.size()),
                  "add --yes to confirm");
    }
    std::fputs(fmt::format("cancel every job of {} active request(s)? [y/N] ", targets.size()).c_str(), stderr);
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      std::fputs("nothing cancelled\n", stderr);
      return 1;
    }
  }
  RV_TRY(outcomes, stop_requests(real->env, targets));
  if (ctx.global.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& o : outcomes) {
      arr.push_back(
          {{"request", o.id}, {"cancelled", o.cancelled}, {"already_ended", o.ended}, {"because", o.because}});
    }
    print_json(arr);
    return 0;
  }
  for (const auto& o : outcomes) {
    std::fputs((o.cancelled.empty()
                    ? fmt::format("request {} already ended ({}); nothing to do\n", o.id, o.ended)
                    : fmt::format("stopped request {}: cancelled {}{}\n", o.id, fmt::join(o.cancelled, " "),
                                  o.because.empty() ? "" : " (" + o.because + ")"))
                   .c_str(),
               stdout);
  }
  return 0;
}

} // namespace

void setup_stop(CLI::App& app, Context& ctx)
{
  auto stop_opts = std::make_shared<StopOptions>();
  auto* stop = app.add_subcommand("stop", "cancel a request's jobs, siblings included");
  stop->alias("cancel");
  stop->add_option("request", stop_opts->key,
                   "request id (or prefix), job id, or job name; REQUEST/step-N: one `rv run --in` step");
  stop->add_flag("--all", stop_opts->all, "every active request");
  stop->add_flag("-y,--yes", stop_opts->yes, "confirm --all");
  stop->callback([&ctx, stop_opts] { ctx.action = [&ctx, stop_opts] { return run_stop(*stop_opts, ctx); }; });
}

} // namespace rv::cli
