#include "core/ssh/destination.hpp"

#include <fmt/format.h>

#include <charconv>

namespace rv::proc {

Result<SshDestination> parse_destination(std::string_view dest)
{
  auto bad = [&](const char* why) {
    return fail(ErrorCode::usage, fmt::format("invalid host '{}': {}", dest, why),
                "use [user@]host[:port] or a Host alias from ~/.ssh/config");
  };
  SshDestination d;
  if (dest.empty()) {
    return bad("empty");
  }
  if (auto at = dest.rfind('@'); at != std::string_view::npos) {
    d.user = std::string(dest.substr(0, at));
    dest.remove_prefix(at + 1);
    if (d.user.empty()) {
      return bad("empty user");
    }
  }
  std::string_view port_text;
  bool has_port = false;
  if (!dest.empty() && dest.front() == '[') { // [v6addr]:port
    auto close = dest.find(']');
    if (close == std::string_view::npos) {
      return bad("missing ']'");
    }
    d.host = std::string(dest.substr(1, close - 1));
    auto rest = dest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return bad("junk after ']'");
      }
      port_text = rest.substr(1);
      has_port = true;
    }
  } else if (auto colon = dest.find(':');
             colon != std::string_view::npos && dest.find(':', colon + 1) == std::string_view::npos) {
    d.host = std::string(dest.substr(0, colon));
    port_text = dest.substr(colon + 1);
    has_port = true;
  } else {
    d.host = std::string(dest);
  }
  if (d.host.empty()) {
    return bad("empty host name");
  }
  for (char c : d.host) {
    if (c == ' ' || c == '/' || c == '\'' || c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return bad("unexpected character in host name");
    }
  }
  if (has_port) {
    int port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc{} || p != port_text.data() + port_text.size() || port < 1 ||
        port > 65535) {
      return bad("port must be 1-65535");
    }
    d.port = port;
  }
  return d;
}

std::string SshEndpoint::label() const
{
  return fmt::format("{}@{}:{}", user.empty() ? "?" : user, host, port);
}

SshEndpoint resolve_endpoint(const SshDestination& dest, const SshEndpoint& from_config)
{
  SshEndpoint e = from_config;
  if (e.host.empty()) {
    e.host = dest.host;
  }
  if (!dest.user.empty()) {
    e.user = dest.user;
  }
  if (dest.port != 0) {
    e.port = static_cast<unsigned>(dest.port);
  }
  if (e.port == 0) {
    e.port = 22;
  }
  return e;
}

} // namespace rv::proc
