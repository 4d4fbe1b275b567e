#include "core/process/ssh_failures.hpp"

#include <fmt/format.h>
#include <libssh/sftp.h>

#include <utility>

namespace rv::proc {

Error ssh_failure(ErrorCode code, std::string_view label, std::string_view what, std::string_view why, std::string hint)
{
  auto message = why.empty() ? fmt::format("ssh {}: {}", label, what) : fmt::format("ssh {}: {}: {}", label, what, why);
  return Error{code, std::move(message), std::move(hint)};
}

Result<void> host_key_verdict(KnownHost state, std::string_view label, std::string_view fingerprint,
                              std::string_view why)
{
  const auto offered = fmt::format("its key is {}", fingerprint);
  switch (state) {
  case KnownHost::ok:
    return {};
  case KnownHost::changed:
    return std::unexpected(ssh_failure(
        ErrorCode::host_key_changed, label, "the host key has CHANGED (this could be an attack); refusing to connect",
        fmt::format("it is now {}", fingerprint),
        "if the cluster's admins announced a new key, remove the old line with `ssh-keygen -R HOST` and connect "
        "once with ssh"));
  case KnownHost::other_type:
    return std::unexpected(ssh_failure(ErrorCode::host_key_changed, label,
                                       "the host offered a key of another type than known_hosts holds; refusing to "
                                       "connect",
                                       offered, "verify the key with the cluster's admins, then update known_hosts"));
  case KnownHost::not_found:
  case KnownHost::unknown:
    return std::unexpected(
        ssh_failure(ErrorCode::host_key_unknown, label, "the host is not in known_hosts; refusing to trust it silently",
                    offered, "connect once with `ssh` to verify and record the key, or pass --known-hosts FILE"));
  case KnownHost::error:
    break;
  }
  return std::unexpected(ssh_failure(ErrorCode::host_key_unknown, label, "cannot check the host key", why,
                                     "check the known_hosts file is readable"));
}

Error connect_failure(std::string_view label, std::string_view why)
{
  const bool timed_out =
      why.find("imeout") != std::string_view::npos || why.find("timed out") != std::string_view::npos;
  return ssh_failure(ErrorCode::unreachable, label, "cannot connect", why,
                     timed_out ? "is the host up and reachable? raise --connect-timeout if it is slow"
                               : "check the host name and port, and that you can reach it (VPN?)");
}

Error auth_failure(std::string_view label, std::string_view why)
{
  return ssh_failure(ErrorCode::auth_failed, label, "the host refused every key (agent, config IdentityFile, defaults)",
                     why, "load your key with `ssh-add`, or pass -i KEY; check `ssh HOST true` works");
}

std::string sftp_status_text(int status, std::string_view session_error)
{
  switch (status) {
  case SSH_FX_NO_SUCH_FILE:
    return "no such file or directory";
  case SSH_FX_PERMISSION_DENIED:
    return "permission denied";
  default:
    return std::string(session_error);
  }
}

int signal_number(std::string_view name)
{
  static const std::pair<std::string_view, int> names[] = {
      {"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ILL", 4},   {"ABRT", 6},  {"FPE", 8},  {"KILL", 9},
      {"SEGV", 11}, {"PIPE", 13}, {"ALRM", 14}, {"TERM", 15}, {"USR1", 10}, {"USR2", 12}};
  for (const auto& [n, v] : names) {
    if (name == n) {
      return v;
    }
  }
  return name.empty() ? 0 : 255;
}

} // namespace rv::proc
