#pragma once
// Where an SSH session goes: the destination as the user typed it, and the endpoint once the
// OpenSSH client config has filled in the rest. Pure: no libssh, no I/O.

#include "core/result.hpp"

#include <string>
#include <string_view>

namespace rv::proc {

// `[user@]host[:port]`, split; an alias from ~/.ssh/config is just a host.
struct SshDestination {
  std::string user;
  std::string host;
  int port = 0; // 0 = from ssh config, else 22
};

// Splits `dest` (`[user@]host[:port]`, `[user@][v6addr]:port`); rejects empty parts.
Result<SshDestination> parse_destination(std::string_view dest);

// The user, host and port a session connects to.
struct SshEndpoint {
  std::string user; // "" = unknown until the server is asked
  std::string host;
  unsigned port = 22;

  // `user@host:port` ("?" for an unknown user): how messages name the host.
  std::string label() const;
};

// Merges what the ssh config resolved for `dest.host` (HostName, User, Port; empty host = none)
// with `dest`: a user or port typed in the destination wins over the config.
SshEndpoint resolve_endpoint(const SshDestination& dest, const SshEndpoint& from_config);

} // namespace rv::proc
