// `rv connect [HOST]`: log in once (a second factor typed here) and leave the connection held by
// a background rv for every later command; `--status` lists the held connections.
// `rv disconnect [HOST]`: ends one (or all). docs/ssh.md, "One held connection".

#include "cli/commands.hpp"
#include "core/duration.hpp"
#include "core/ssh/hold.hpp"
#include "core/ssh/hold_protocol.hpp"
#include "core/ssh/runner.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

namespace rv::cli {
namespace {

struct ConnectOptions {
  std::string host;
  bool status = false;
};

std::string age_text(long long started)
{
  const auto s = std::max<long long>(0, static_cast<long long>(std::time(nullptr)) - started);
  if (s < 120) {
    return fmt::format("{}s", s);
  }
  if (s < 7200) {
    return fmt::format("{}m", s / 60);
  }
  return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
}

Result<int> show_status(Context& ctx)
{
  RV_TRY(dir, proc::hold::private_dir(proc::SshOptions{}));
  auto holders = proc::hold::list_holders(dir);
  if (ctx.global.json) {
    print_json({{"dir", dir}, {"connections", holders}});
    return 0;
  }
  if (holders.empty()) {
    std::fputs(fmt::format("no held connections ({})\n", dir).c_str(), stdout);
    return 0;
  }
  // The alias the user typed (from the socket's name) beside the address the holder reached (N12).
  std::fputs(fmt::format("{:<16} {:<30} {:>8} {:>7} {:>9} {:>8}\n", "ALIAS", "HOST", "PID", "AGE", "CHANNELS", "SERVED")
                 .c_str(),
             stdout);
  for (const auto& h : holders) {
    const auto socket = h.value("socket", "");
    auto alias = proc::hold::socket_destination(std::filesystem::path(socket).filename().string());
    if (h.value("stale", false)) {
      std::fputs(fmt::format("{:<16} stale socket {} (no process answers; replaced on next use)\n",
                             alias.empty() ? "-" : alias, socket)
                     .c_str(),
                 stdout);
      continue;
    }
    std::fputs(fmt::format("{:<16} {:<30} {:>8} {:>7} {:>9} {:>8}\n", alias.empty() ? "-" : alias,
                           h.value("label", "?"), h.value("pid", 0), age_text(h.value("started", 0LL)),
                           h.value("channels", 0), h.value("served", 0L))
                   .c_str(),
               stdout);
  }
  return 0;
}

Result<int> run_connect(const ConnectOptions& o, Context& ctx)
{
  if (o.status) {
    return show_status(ctx);
  }
  RV_TRY(options, ctx.ssh_options(o.host));
  if (options.destination.empty()) {
    return fail(ErrorCode::usage, "rv connect: no host to connect to",
                "pass HOST, --host, or set \"host\" in the config");
  }
  proc::SshRunner runner(options);
  RV_TRY_VOID(runner.connect());
  const auto where = runner.where().substr(4);
  if (!runner.held()) {
    const auto why = runner.not_held_reason();
    if (ctx.global.json) {
      print_json({{"host", where}, {"held", false}, {"reason", why}});
    } else {
      std::fputs(fmt::format("connected to {}; nothing is held: {}\n", where, why).c_str(), stdout);
    }
    return 0;
  }
  auto live = proc::hold::find_live(options);
  auto info = live ? live->hello("status") : Result<nlohmann::json>(nlohmann::json::object());
  const auto pid = info ? info->value("pid", 0) : 0;
  if (ctx.global.json) {
    print_json({{"host", where}, {"held", true}, {"pid", pid}, {"idle_limit_s", options.persist.count()}});
  } else if (!ctx.global.quiet) {
    std::fputs(fmt::format("holding the connection to {} (pid {}): every rv command for it goes through it; it "
                           "ends after {} unused, or with rv disconnect\n",
                           where, pid, format_human_duration(options.persist.count()))
                   .c_str(),
               stdout);
  }
  return 0;
}

// Ends the holder at `socket`; first warns when channels are still open on it: their commands end
// with it, "may have run" (reads and waits are asked again, on a new held connection).
bool end_holder(const std::string& socket)
{
  if (auto status = proc::hold::Client(socket).hello("status"); status && status->value("channels", 0) > 0) {
    const int open = status->value("channels", 0);
    spdlog::warn("the held connection to {} has {} open channel{}: ending it ends {} (a command may have run; reads "
                 "and waits start a new held connection)",
                 status->value("label", "?"), open, open == 1 ? "" : "s", open == 1 ? "it" : "them");
  }
  return proc::hold::quit_holder(socket);
}

Result<int> run_disconnect(const std::string& host, bool all, Context& ctx)
{
  std::vector<std::string> sockets;
  if (!all && (!host.empty() || !ctx.config.get("host").empty())) {
    RV_TRY(options, ctx.ssh_options(host));
    RV_TRY(path, proc::hold::socket_path(options));
    sockets.push_back(path);
    if (!proc::hold::Client(path).hello("status")) {
      // Nothing holds this exact connection (another --ssh-config or key made the one the user
      // sees in `rv connect --status`): end the holders made for the same alias (N12).
      const auto alias = proc::hold::socket_destination(std::filesystem::path(path).filename().string());
      RV_TRY(dir, proc::hold::private_dir(proc::SshOptions{}));
      for (const auto& h : proc::hold::list_holders(dir)) {
        const auto other = h.value("socket", "");
        if (!alias.empty() && other != path && !h.value("stale", false) &&
            proc::hold::socket_destination(std::filesystem::path(other).filename().string()) == alias) {
          spdlog::info("ending the held connection to {} made with other ssh settings ({})", alias,
                       h.value("label", "?"));
          sockets.push_back(other);
        }
      }
    }
  } else {
    RV_TRY(dir, proc::hold::private_dir(proc::SshOptions{}));
    for (const auto& h : proc::hold::list_holders(dir)) {
      sockets.push_back(h.value("socket", ""));
    }
  }
  nlohmann::json ended = nlohmann::json::array();
  for (const auto& s : sockets) {
    if (end_holder(s)) {
      ended.push_back(s);
    }
  }
  if (ctx.global.json) {
    print_json({{"ended", ended}});
  } else if (!ctx.global.quiet) {
    std::fputs(ended.empty() ? "no held connection to end\n"
                             : fmt::format("ended {} held connection(s)\n", ended.size()).c_str(),
               stdout);
  }
  return 0;
}

} // namespace

void setup_connect(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<ConnectOptions>();
  auto* cmd = app.add_subcommand("connect", "log in once (type a second factor here) and hold the connection for "
                                            "every later rv command");
  cmd->add_option("HOST", opts->host, "login node (default: the configured host)");
  cmd->add_flag("--status", opts->status, "list the held connections: host, pid, age, open channels");
  cmd->footer("The held connection ends after connection_persist unused (default 30m; 0 turns holding off), "
              "with rv disconnect, or when the network drops. docs/ssh.md.");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_connect(*opts, ctx); }; });

  auto host = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  auto* dis = app.add_subcommand("disconnect", "end the held connection to HOST (default: the configured host, "
                                               "else all)");
  dis->add_option("HOST", *host, "login node");
  dis->add_flag("--all", *all, "end every held connection of this user");
  dis->callback([&ctx, host, all] { ctx.action = [&ctx, host, all] { return run_disconnect(*host, *all, ctx); }; });
}

} // namespace rv::cli
