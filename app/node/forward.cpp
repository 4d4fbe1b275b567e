#include "app/node/forward.hpp"

#include "core/ssh/forward.hpp"
#include "core/store/lock_probe.hpp"
#include "slurm/job_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

namespace rv::app {

nlohmann::json to_json(const ForwardRecord& f)
{
  return {{"local_port", f.local_port},
          {"remote_port", f.remote_port},
          {"node", f.node},
          {"address", f.address},
          {"request", f.request},
          {"job_id", f.job_id},
          {"host", f.host},
          {"pid", f.pid},
          {"started_at", f.started_at},
          {"log", f.log}};
}

Result<ForwardRecord> forward_from_json(const nlohmann::json& j)
{
  try {
    ForwardRecord f;
    f.local_port = j.at("local_port").get<int>();
    f.remote_port = j.at("remote_port").get<int>();
    f.node = j.value("node", "");
    f.address = j.value("address", "");
    f.request = j.value("request", "");
    f.job_id = j.value("job_id", "");
    f.host = j.value("host", "");
    f.pid = j.at("pid").get<long>();
    f.started_at = j.value("started_at", "");
    f.log = j.value("log", "");
    return f;
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::parse, fmt::format("bad forward record: {}", e.what()));
  }
}

std::string forward_id(int local_port)
{
  return fmt::format("port-{}", local_port);
}

Result<void> save_forward(store::RecordStore& store, const ForwardRecord& f)
{
  auto j = to_json(f);
  auto updated = store.update(forward_id(f.local_port), [&](nlohmann::json& r) { r = j; });
  if (updated) {
    return {};
  }
  return store.create(forward_id(f.local_port), j);
}

Result<std::vector<ForwardRecord>> load_forwards(const store::RecordStore& store)
{
  std::vector<std::string> skipped;
  RV_TRY(all, store.list(&skipped));
  for (const auto& s : skipped) {
    spdlog::warn("skipping forward record {}", s);
  }
  std::vector<ForwardRecord> out;
  for (const auto& j : all) {
    if (auto f = forward_from_json(j)) {
      out.push_back(std::move(*f));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.local_port < b.local_port; });
  return out;
}

Result<store::FileLock> hold_forward_lock(const store::RecordStore& store, int local_port)
{
  std::error_code ec;
  std::filesystem::create_directories(store.dir(), ec);
  return store::FileLock::acquire(store.dir() / (forward_id(local_port) + ".lock"), true);
}

bool forward_alive(const store::RecordStore& store, const ForwardRecord& f)
{
  return store::lock_held(store.dir() / (forward_id(f.local_port) + ".lock"));
}

std::string forward_text(const ForwardRecord& f)
{
  return fmt::format("127.0.0.1:{} -> {}:{} (request {}, job {})", f.local_port, f.node, f.remote_port, f.request,
                     f.job_id);
}

bool check_forwarded_job(Env& env, const NodeTarget& target, LoginBackoff& logins, ForwardEnd& end)
{
  if (!logins.may_try(env.clock.now())) {
    return true; // not before the wait after a failed login is over
  }
  auto view = job_now(env, target);
  if (!view) {
    if (LoginBackoff::is_login_failure(view.error())) {
      const auto wait = logins.failed(env.clock.now());
      if (logins.exhausted()) {
        end.login_failed = true;
        return false;
      }
      spdlog::warn("forward: cannot read the state of job {}: {} (no terminal: the next try in {} s)", target.job_id,
                   view.error().message, std::chrono::duration_cast<std::chrono::seconds>(wait).count());
      return true;
    }
    spdlog::warn("forward: cannot read the state of job {}: {}", target.job_id, view.error().message);
    return true; // a passing failure; the next check tries again
  }
  logins.succeeded();
  // No record anywhere means the job is long gone.
  if (slurm::is_terminal(view->state) || view->source.empty()) {
    end.job_ended = true;
    end.job_state = view->source.empty() ? "GONE" : slurm::to_string(view->state);
    return false;
  }
  return true;
}

Result<ForwardEnd> run_forward(Env& env, proc::StreamOpener& opener, const NodeTarget& target, int listen_fd,
                               int remote_port, std::chrono::milliseconds check_every)
{
  ForwardEnd end;
  proc::ForwardHooks hooks;
  hooks.check_every = check_every;
  hooks.open = [&] { return opener.open_stream(target.address, remote_port); };
  hooks.note = [](std::string_view text) { spdlog::info("forward: {}", text); };
  LoginBackoff logins;
  hooks.keep_going = [&] { return check_forwarded_job(env, target, logins, end); };
  RV_TRY(stats, proc::run_forward(listen_fd, hooks));
  end.interrupted = stats.interrupted;
  end.connections = stats.connections;
  end.bytes_in = stats.bytes_in;
  end.bytes_out = stats.bytes_out;
  if (end.job_ended) {
    env.output.err(fmt::format("rv: forward to {}:{} stopped: job {} of request {} ended ({})\n", target.node,
                               remote_port, target.job_id, target.request_id, end.job_state));
  } else if (end.login_failed) {
    env.output.err(fmt::format("rv: forward to {}:{} stopped: the login to the cluster failed {} times in a row "
                               "with no terminal to answer it; run rv forward again at a terminal\n",
                               target.node, remote_port, LoginBackoff::k_max));
  } else if (end.interrupted) {
    env.output.err(fmt::format("rv: forward to {}:{} stopped\n", target.node, remote_port));
  }
  return end;
}

} // namespace rv::app
