#include "app/node/forward_control.hpp"

#include "core/printable.hpp"
#include "core/process/daemon.hpp"
#include "core/ssh/stream.hpp"
#include "core/utc_time.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace rv::app {
namespace {

// Runs the forward in this process until the job ends or an interrupt; removes its record.
Result<int> hold_forward(Env& env, store::RecordStore& store, const NodeTarget& target, int fd, const ForwardRecord& f)
{
  // Over SSH the session's direct-tcpip channels; with rv on the login node, plain TCP.
  proc::TcpOpener tcp;
  auto* ssh = dynamic_cast<proc::StreamOpener*>(&env.cluster);
  auto end = run_forward(env, ssh != nullptr ? *ssh : tcp, target, fd, f.remote_port);
  (void)store.remove(forward_id(f.local_port));
  ::close(fd);
  if (!end) {
    return std::unexpected(end.error());
  }
  if (end->login_failed) {
    return exit_code_for(ErrorCode::auth_failed);
  }
  return end->interrupted && !end->job_ended ? 130 : 0;
}

// The background rv: it owns the SSH session and the socket from here on.
Result<int> hold_in_background(Env& env, store::RecordStore& store, const NodeTarget& target, int fd, ForwardRecord f,
                               proc::Detached& d)
{
  f.pid = ::getpid();
  RV_TRY(lock, hold_forward_lock(store, f.local_port)); // held until this process ends
  RV_TRY_VOID(save_forward(store, f));
  proc::ready(d);
  env.output.err(printable(fmt::format("rv: forwarding {}\n", forward_text(f))));
  return hold_forward(env, store, target, fd, f);
}

} // namespace

store::RecordStore forward_store(const store::RecordStore& requests)
{
  return store::RecordStore(requests.dir().parent_path() / "forwards");
}

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

Result<void> require_free_port(store::RecordStore& store, int local)
{
  RV_TRY(live, live_forwards(store));
  for (const auto& f : live) {
    if (f.local_port == local) {
      return fail(ErrorCode::usage, fmt::format("local port {} already forwards {}", local, forward_text(f)),
                  fmt::format("rv forward --stop {} first, or choose another --local-port", local));
    }
  }
  return {};
}

Result<std::vector<ForwardRecord>> stop_forwards(store::RecordStore& store, int port,
                                                 const std::function<void(const ForwardRecord&)>& stopped)
{
  RV_TRY(live, live_forwards(store));
  std::vector<ForwardRecord> targets;
  for (const auto& f : live) {
    if (port == 0 || f.local_port == port) {
      targets.push_back(f);
    }
  }
  if (port != 0 && targets.empty()) {
    return fail(ErrorCode::usage, fmt::format("no forward listens on local port {}", port),
                "rv forward --list shows the running ones");
  }
  for (const auto& f : targets) {
    if (!proc::terminate_process(static_cast<pid_t>(f.pid))) {
      return fail(ErrorCode::generic, fmt::format("forward {} (pid {}) did not stop", forward_text(f), f.pid));
    }
    (void)store.remove(forward_id(f.local_port));
    stopped(f);
  }
  return targets;
}

Result<int> start_forward(Env& env, store::RecordStore& store, const NodeTarget& target, const ForwardStart& how,
                          const std::function<void(const ForwardRecord&)>& started)
{
  const int local = how.local_port;
  RV_TRY(fd, proc::listen_local(local));
  ForwardRecord f{local,
                  how.remote_port,
                  target.node,
                  target.address,
                  target.request_id,
                  target.job_id,
                  env.cluster.where(),
                  0,
                  utc_iso(env.clock.epoch_seconds()),
                  ""};
  if (how.foreground) {
    f.pid = ::getpid();
    RV_TRY(lock, hold_forward_lock(store, local)); // held until this process ends
    RV_TRY_VOID(save_forward(store, f));
    started(f);
    return hold_forward(env, store, target, fd, f);
  }
  std::error_code ec;
  std::filesystem::create_directories(store.dir(), ec);
  f.log = (store.dir() / (forward_id(local) + ".log")).string();
  bool child_ready = false;
  RV_TRY(d, proc::detach(f.log, &child_ready));
  if (d.child == 0) {
    return hold_in_background(env, store, target, fd, f, d);
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

} // namespace rv::app
