#include "core/ssh/options.hpp"

#include "core/config.hpp"

namespace rv::proc {

Result<SshOptions> ssh_options_from(const Config& config, const std::string& home, const std::string& host)
{
  auto below_home = [&](const std::string& path) { return path.starts_with("~/") ? home + path.substr(1) : path; };
  RV_TRY(timeout, config.get_seconds("connect_timeout"));
  RV_TRY(persist, config.get_seconds("connection_persist"));
  SshOptions options;
  options.destination = host.empty() ? config.get("host") : host;
  options.ssh_config = below_home(config.get("ssh_config"));
  options.identity_file = below_home(config.get("identity_file"));
  (config.origin("known_hosts") == Origin::file ? options.known_hosts_fallback : options.known_hosts) =
      below_home(config.get("known_hosts"));
  options.connect_timeout = std::chrono::seconds(timeout);
  options.persist = std::chrono::seconds(persist);
  return options;
}

} // namespace rv::proc
