// `rv forward PORT [REQUEST]`: 127.0.0.1:PORT (or --local-port) carried to PORT on a running
// request's node, in a background rv until the job ends; `--list` and `--stop` manage them.

#include "app/node/forward.hpp"
#include "cli/commands.hpp"
#include "core/printable.hpp"
#include "core/process/daemon.hpp"
#include "core/process/stream.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

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

store::RecordStore forward_store()
{
  return store::RecordStore(request_store().dir().parent_path() / "forwards");
}

void say(const std::string& text)
{
  std::fputs(printable(text).c_str(), stdout); // node names come from the cluster
  std::fflush(stdout);
}

// The forwards whose rv still runs (it holds its lock: a pid alone may be another process's by
// now); the records of dead ones are removed, and nothing is ever signalled for them.
Result<std::vector<ForwardRecord>> live_forwards(store::RecordStore& store)
{
  RV_TRY(all, load_forwards(store));
  std::vector<ForwardRecord> live;
  for (auto& f : all) {
    if (forward_alive(store, f)) {
      live.push_back(std::move(f));
    } else {
      (void)store.remove(forward_id(f.local_port));
    }
  }
  return live;
}

Result<int> list_forwards(Context& ctx)
{
  auto store = forward_store();
  RV_TRY(live, live_forwards(store));
  if (ctx.global.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& f : live) {
      arr.push_back(to_json(f));
    }
    print_json(arr);
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
  auto store = forward_store();
  RV_TRY(live, live_forwards(store));
  std::vector<ForwardRecord> targets;
  for (const auto& f : live) {
    if (opts.port == 0 || f.local_port == opts.port) {
      targets.push_back(f);
    }
  }
  if (opts.port != 0 && targets.empty()) {
    return fail(ErrorCode::usage, fmt::format("no forward listens on local port {}", opts.port),
                "rv forward --list shows the running ones");
  }
  nlohmann::json stopped = nlohmann::json::array();
  for (const auto& f : targets) {
    if (!proc::terminate_process(static_cast<pid_t>(f.pid))) {
      return fail(ErrorCode::generic, fmt::format("forward {} (pid {}) did not stop", forward_text(f), f.pid));
    }
    (void)store.remove(forward_id(f.local_port));
    stopped.push_back(to_json(f));
    if (!ctx.global.json) {
      say(fmt::format("stopped forward {}\n", forward_text(f)));
    }
  }
  if (ctx.global.json) {
    print_json(stopped);
  } else if (targets.empty()) {
    say("no forwards running\n");
  }
  return 0;
}

// Runs the forward in this process until the job ends or an interrupt; removes its record.
Result<int> hold_forward(RealEnv& real, store::RecordStore& store, const NodeTarget& target, int fd,
                         const ForwardRecord& f)
{
  // Over SSH the session's direct-tcpip channels; with rv on the login node, plain TCP.
  proc::TcpOpener tcp;
  auto* ssh = dynamic_cast<proc::StreamOpener*>(real.cluster.get());
  auto end = run_forward(real.env, ssh != nullptr ? *ssh : tcp, target, fd, f.remote_port);
  (void)store.remove(forward_id(f.local_port));
  ::close(fd);
  if (!end) {
    return std::unexpected(end.error());
  }
  return end->interrupted && !end->job_ended ? 130 : 0;
}

Result<int> start_forward(const ForwardOptions& opts, Context& ctx)
{
  if (opts.port < 1 || opts.port > 65535) {
    return fail(ErrorCode::usage, "rv forward needs the job's PORT (1-65535)", "rv forward 8888 [REQUEST]");
  }
  const int local = opts.local_port != 0 ? opts.local_port : opts.port;
  auto store = forward_store();
  RV_TRY(live, live_forwards(store));
  for (const auto& f : live) {
    if (f.local_port == local) {
      return fail(ErrorCode::usage, fmt::format("local port {} already forwards {}", local, forward_text(f)),
                  fmt::format("rv forward --stop {} first, or choose another --local-port", local));
    }
  }
  std::string key = opts.key;
  RV_TRY(real, ctx.make_env_for_request(key)); // the request's own cluster
  RV_TRY(target, running_target(real->env, key, opts.node));
  RV_TRY(fd, proc::listen_local(local));
  ForwardRecord f{local,
                  opts.port,
                  target.node,
                  target.address,
                  target.request_id,
                  target.job_id,
                  real->env.cluster.where(),
                  0,
                  utc_iso(real->env.clock.epoch_seconds()),
                  ""};
  auto started = [&](const ForwardRecord& rec) {
    if (ctx.global.json) {
      print_json(to_json(rec));
    } else {
      say(fmt::format("forwarding {}\n", forward_text(rec)));
      say(rec.log.empty() ? "Ctrl-C stops it; it stops by itself when the job ends\n"
                          : fmt::format("in the background (pid {}, log {}): rv forward --stop {} ends it\n", rec.pid,
                                        rec.log, rec.local_port));
    }
  };
  if (opts.foreground) {
    f.pid = ::getpid();
    RV_TRY(lock, hold_forward_lock(store, local)); // held until this process ends
    RV_TRY_VOID(save_forward(store, f));
    started(f);
    return hold_forward(*real, store, target, fd, f);
  }
  std::error_code ec;
  std::filesystem::create_directories(store.dir(), ec);
  f.log = (store.dir() / (forward_id(local) + ".log")).string();
  bool child_ready = false;
  RV_TRY(d, proc::detach(f.log, &child_ready));
  if (d.child == 0) { // the background rv: it owns the SSH session and the socket from here on
    f.pid = ::getpid();
    auto lock = hold_forward_lock(store, local); // held until this process ends
    if (!lock) {
      return std::unexpected(lock.error());
    }
    if (auto saved = save_forward(store, f); !saved) {
      return std::unexpected(saved.error());
    }
    proc::ready(d);
    std::fputs(printable(fmt::format("rv: forwarding {}\n", forward_text(f))).c_str(), stderr);
    return hold_forward(*real, store, target, fd, f);
  }
  if (!child_ready) {
    return fail(ErrorCode::generic, "the background forward stopped before it started", "see " + f.log);
  }
  f.pid = d.child;
  started(f);
  // The session and the socket are the child's now: leave without closing them (no SSH disconnect).
  std::fflush(nullptr);
  std::_Exit(0);
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
