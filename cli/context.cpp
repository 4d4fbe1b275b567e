#include "cli/context.hpp"

#include "core/process/local_runner.hpp"
#include "core/process/ssh_runner.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace rv::cli {

std::string expand_home(const std::string& path)
{
  if (path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + path.substr(1);
  }
  return path;
}

Result<void> Context::load_config()
{
  auto env = environment_map();
  std::string path = global.config_file;
  if (path.empty()) {
    auto it = env.find("RV_CONFIG");
    path = it != env.end() ? it->second : Config::default_path();
  }
  if (auto r = config.load_file(path); !r) {
    return r;
  }
  if (auto r = config.load_env(env); !r) {
    return r;
  }
  const std::pair<const char*, const std::optional<std::string>*> flags[] = {
      {"host", &global.host},
      {"identity_file", &global.identity_file},
      {"known_hosts", &global.known_hosts},
      {"ssh_config", &global.ssh_config},
      {"connect_timeout", &global.connect_timeout},
      {"account", &global.account},
  };
  for (const auto& [key, value] : flags) {
    if (value->has_value()) {
      if (auto r = config.set(key, **value, Origin::flag); !r) {
        return r;
      }
    }
  }
  return {};
}

Result<std::unique_ptr<proc::Runner>> Context::make_runner()
{
  const auto& host = config.get("host");
  if (host.empty()) {
    if (!proc::on_path("sinfo")) {
      return fail(ErrorCode::usage, "no cluster to talk to: no --host given and Slurm's commands are not on PATH",
                  "pass --host [user@]login-node, set RV_HOST, or put \"host\" in " + Config::default_path());
    }
    spdlog::debug("runner: local (Slurm commands on PATH)");
    return std::make_unique<proc::LocalRunner>();
  }
  RV_TRY(timeout, config.get_seconds("connect_timeout"));
  proc::SshOptions options;
  options.destination = host;
  options.ssh_config = expand_home(config.get("ssh_config"));
  options.identity_file = expand_home(config.get("identity_file"));
  options.known_hosts = expand_home(config.get("known_hosts"));
  options.connect_timeout = std::chrono::seconds(timeout);
  spdlog::debug("runner: ssh {}", host);
  return std::make_unique<proc::SshRunner>(std::move(options));
}

} // namespace rv::cli
