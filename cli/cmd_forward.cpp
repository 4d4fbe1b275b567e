// `rv forward PORT [REQUEST]`: 127.0.0.1:PORT (or --local-port) carried to PORT on a running
// request's node, in a background rv until the job ends; `--list` and `--stop` manage them.

#include "app/node/forward_control.hpp"
#include "cli/commands.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace rv::cli {
using namespace rv::app;
namespace {

struct ForwardOptions {
  int port = 0;
  std::string key;
  int local_port = 0;
  int node = 0;
  bool list = false;
  bool stop = false;
  bool foreground = false;
};

void say(const std::string& text)
{
  std::fputs(printable(text).c_str(), stdout); // node names come from the cluster
  std::fflush(stdout);
}

void print_forwards_json(const std::vector<ForwardRecord>& forwards)
{
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& f : forwards) {
    arr.push_back(to_json(f));
  }
  print_json(arr);
}

Result<int> list_forwards(Context& ctx)
{
  auto store = forward_store(request_store());
  RV_TRY(live, live_forwards(store));
  if (ctx.global.json) {
    print_forwards_json(live);
    return 0;
  }
  if (live.empty()) {
    say("no forwards running\n");
    return 0;
  }
  say(fmt::format("{:<7} {:<24} {:<9} {:<8} {:<8} {}\n", "LOCAL", "TO", "REQUEST", "JOB", "PID", "STARTED"));
  for (const auto& f : live) {
    say(fmt::format("{:<7} {:<24} {:<9} {:<8} {:<8} {}\n", f.local_port, fmt::format("{}:{}", f.node, f.remote_port),
                    f.request, f.job_id, f.pid, f.started_at));
  }
  return 0;
}

Result<int> stop_forwards(const ForwardOptions& opts, Context& ctx)
{
  auto store = forward_store(request_store());
  RV_TRY(stopped, app::stop_forwards(store, opts.port, [&](const ForwardRecord& f) {
           if (!ctx.global.json) {
             say(fmt::format("stopped forward {}\n", forward_text(f)));
           }
         }));
  if (ctx.global.json) {
    print_forwards_json(stopped);
  } else if (stopped.empty()) {
    say("no forwards running\n");
  }
  return 0;
}

Result<int> start_forward(const ForwardOptions& opts, Context& ctx)
{
  if (opts.port < 1 || opts.port > 65535) {
    return fail(ErrorCode::usage, "rv forward needs the job's PORT (1-65535)", "rv forward 8888 [REQUEST]");
  }
  const ForwardStart how{opts.local_port != 0 ? opts.local_port : opts.port, opts.port, opts.foreground};
  auto store = forward_store(request_store());
  RV_TRY_VOID(require_free_port(store, how.local_port));
  std::string key = opts.key;
  RV_TRY(real, ctx.make_env_for_request(key)); // the request's own cluster
  RV_TRY(target, running_target(real->env, key, opts.node));
  return app::start_forward(real->env, store, target, how, [&](const ForwardRecord& rec) {
    if (ctx.global.json) {
      print_json(to_json(rec));
    } else {
      say(fmt::format("forwarding {}\n", forward_text(rec)));
      say(rec.log.empty() ? "Ctrl-C stops it; it stops by itself when the job ends\n"
                          : fmt::format("in the background (pid {}, log {}): rv forward --stop {} ends it\n", rec.pid,
                                        rec.log, rec.local_port));
    }
  });
}

Result<int> run_forward_cmd(const ForwardOptions& opts, Context& ctx)
{
  if (opts.list && opts.stop) {
    return fail(ErrorCode::usage, "--list and --stop do not go together");
  }
  if (opts.list) {
    return list_forwards(ctx);
  }
  if (opts.stop) {
    return stop_forwards(opts, ctx);
  }
  return start_forward(opts, ctx);
}

} // namespace

void setup_forward(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<ForwardOptions>();
  auto* fwd = app.add_subcommand("forward", "forward a local port to a port on a running request's node");
  fwd->add_option("port", opts->port, "the port on the job's node (with --stop: the local port to stop)")
      ->check(CLI::Range(1, 65535));
  fwd->add_option("request", opts->key, "request id (or prefix), job id, or job name; default the newest running");
  fwd->add_option("--local-port", opts->local_port, "listen on this local port (default PORT)")
      ->type_name("PORT")
      ->check(CLI::Range(1, 65535));
  fwd->add_option("--node", opts->node, "node K of a multi-node job (0 = the first)")
      ->type_name("K")
      ->check(CLI::NonNegativeNumber);
  fwd->add_flag("--list", opts->list, "the forwards running in the background");
  fwd->add_flag("--stop", opts->stop, "stop the forward on local port PORT (every forward without PORT)");
  fwd->add_flag("--foreground", opts->foreground, "stay in the foreground (Ctrl-C stops it)");
  fwd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_forward_cmd(*opts, ctx); }; });
}

} // namespace rv::cli
