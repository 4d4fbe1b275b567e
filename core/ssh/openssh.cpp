#include "core/ssh/openssh.hpp"

#include "core/process/shell.hpp"
#include "core/ssh/destination.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

namespace rv::proc {
namespace {

std::string expand_home(std::string_view path, std::string_view home)
{
  if (path.starts_with("~/") && !home.empty()) {
    return fmt::format("{}{}", home, path.substr(1));
  }
  return std::string(path);
}

} // namespace

OpenSshView parse_openssh_view(std::string_view output, std::string_view home)
{
  OpenSshView view;
  for (auto line : text::lines(output)) {
    const auto space = line.find(' ');
    if (space == std::string_view::npos) {
      continue;
    }
    const auto key = line.substr(0, space);
    const auto value = text::trim(line.substr(space + 1));
    if (key == "identityfile") {
      view.identity_files.push_back(expand_home(value, home));
    } else if (key == "certificatefile") {
      view.certificate_files.push_back(expand_home(value, home));
    } else if (key == "identitiesonly") {
      view.identities_only = value == "yes";
    } else if (key == "batchmode") {
      view.batch_mode = value == "yes";
    } else if (key == "gssapiauthentication") {
      view.gssapi = value == "yes";
    } else if (key == "proxyjump" && value != "none") {
      view.proxy_jump = std::string(value);
    }
  }
  return view;
}

bool config_needs_openssh(std::string_view config_text)
{
  const auto lower = text::lower(config_text);
  for (const char* word : {"proxyjump", "certificatefile", "identitiesonly", "gssapiauthentication", "batchmode",
                           "identityfile", "include", "match"}) {
    if (lower.contains(word)) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> known_hosts_ssh_options(const std::string& known_hosts, const std::string& fallback)
{
  if (!known_hosts.empty()) { // ssh splits an option's value into words (it takes several files)
    return {"-o", "UserKnownHostsFile=" + ssh_option_quote(known_hosts)};
  }
  if (!fallback.empty()) {
    return {"-o",
            "GlobalKnownHostsFile=/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2 " + ssh_option_quote(fallback)};
  }
  return {};
}

Result<std::vector<std::string>> proxy_jump_argv(const JumpSpec& spec)
{
  std::string_view jump = spec.jump;
  std::string_view extra;
  if (const auto comma = jump.rfind(','); comma != std::string_view::npos) {
    extra = jump.substr(0, comma);
    jump.remove_prefix(comma + 1);
  }
  if (jump.starts_with("ssh://")) {
    jump.remove_prefix(6);
  }
  auto hop = parse_destination(jump);
  if (!hop) {
    return fail(ErrorCode::config, fmt::format("cannot read ProxyJump '{}': {}", spec.jump, hop.error().message),
                "ProxyJump takes [user@]host[:port] hops separated by commas");
  }
  std::vector<std::string> argv{"ssh"};
  if (!spec.config.empty()) {
    argv.insert(argv.end(), {"-F", spec.config});
  }
  if (!spec.log_file.empty()) {
    argv.insert(argv.end(), {"-E", spec.log_file});
  }
  for (auto& word : known_hosts_ssh_options(spec.known_hosts, spec.known_hosts_fallback)) {
    argv.push_back(std::move(word));
  }
  argv.insert(argv.end(), {"-o", fmt::format("ConnectTimeout={}", spec.connect_timeout.count())});
  if (!hop->user.empty()) {
    argv.insert(argv.end(), {"-l", hop->user});
  }
  if (hop->port != 0) {
    argv.insert(argv.end(), {"-p", std::to_string(hop->port)});
  }
  if (!extra.empty()) {
    argv.insert(argv.end(), {"-J", std::string(extra)});
  }
  argv.insert(argv.end(), {"-W", fmt::format("[{}]:{}", spec.host, spec.port), hop->host});
  return argv;
}

std::string proxy_command_line(const std::vector<std::string>& argv)
{
  std::string line;
  for (char c : login_shell_command(argv)) {
    line += c;
    if (c == '%') {
      line += '%';
    }
  }
  return line;
}

} // namespace rv::proc
