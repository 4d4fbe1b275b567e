#include "cli/run_after.hpp"

#include "app/run/after.hpp"
#include "cli/after_work.hpp"
#include "core/printable.hpp"
#include "core/process/daemon.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace rv::cli {

void add_after_flag(CLI::App* cmd, std::string& after)
{
  cmd->add_option(
         "--after", after,
         "REQ[:ok|any]: start only after request REQ ends: REQ or REQ:ok after its success (a failure cancels this "
         "one), REQ:any after its end however it ended; on another cluster rv waits for it "
         "(docs/taskfile.md, \"Pipelines\")")
      ->type_name("REQ");
}

Result<void> apply_after(const std::string& after, app::JobOrder& order, RealEnv& real, Context& ctx, bool follow)
{
  if (after.empty()) {
    return {};
  }
  RV_TRY(spec, app::parse_after(after));
  RV_TRY(decision, app::resolve_after(real.env, spec));
  spdlog::info("--after: {}", decision.note);
  order.after = decision.record;
  if (decision.mode == app::AfterDecision::Mode::dependency) {
    order.dependency = decision.dependency;
    return {};
  }
  if (decision.mode == app::AfterDecision::Mode::now || order.dry_run) {
    return {};
  }
  // Another cluster: rv waits for the other request's end (in the background without -f), then
  // submits this one.
  const auto first = decision.record.value("request", spec.request);
  if (follow) {
    spdlog::info("--after: waiting for request {} to end", first);
  } else {
    const auto log = real.requests.dir() / ("after-" + first + "-" + std::to_string(::getpid()) + ".log");
    if (!ctx.global.quiet) {
      std::fputs(printable(fmt::format("rv: waiting in the background for request {} to end{}; this run is planned "
                                       "and submitted then (its log: {})\n",
                                       first, spec.kind == app::AfterKind::ok ? " well" : "", log.string()))
                     .c_str(),
                 stderr);
    }
    bool child_ready = false;
    RV_TRY(d, proc::detach(log.string(), &child_ready));
    if (d.child != 0) {
      std::fflush(nullptr);
      std::_Exit(0); // the session is the child's now: leave without closing it
    }
    close_inherited_files();
    proc::ready(d);
  }
  std::string key = first;
  RV_TRY(other, ctx.make_env_for_request(key));
  RV_TRY(ended, app::wait_for_end(other->env, key));
  spdlog::info("--after: request {} ended ({})", ended.id, app::to_string(ended.state));
  RV_TRY_VOID(app::may_start_after(ended, spec));
  return {};
}

} // namespace rv::cli
