#include "core/ssh/failures.hpp"

#include <fmt/format.h>
#include <libssh/sftp.h>

#include <utility>

namespace rv::proc {

Error ssh_failure(ErrorCode code, std::string_view label, std::string_view what, std::string_view why, std::string hint)
{
  auto message = why.empty() ? fmt::format("ssh {}: {}", label, what) : fmt::format("ssh {}: {}: {}", label, what, why);
  return Error{code, std::move(message), std::move(hint)};
}

ExecFailure exec_failure(bool session_alive, bool answered_no)
{
  return session_alive && answered_no ? ExecFailure::refused : ExecFailure::may_have_run;
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
    return std::unexpected(ssh_failure(
        ErrorCode::host_key_unknown, label, "the host is not in known_hosts; refusing to trust it silently", offered,
        "check that fingerprint with your cluster's documentation, then record it with `rv init` (or "
        "`ssh HOST` once: rv reads the ssh config's UserKnownHostsFile as OpenSSH does)"));
  case KnownHost::error:
    break;
  }
  return std::unexpected(ssh_failure(ErrorCode::host_key_unknown, label, "cannot check the host key", why,
                                     "check the known_hosts file is readable"));
}

ConnectProblem classify_connect_error(std::string_view why)
{
  auto has = [&](std::string_view word) { return why.find(word) != std::string_view::npos; };
  // libssh 0.10: "Failed to resolve hostname H (Name or service not known)", "Connection
  // refused", "Timeout connecting to H", "No route to host", "Network is unreachable".
  if (has("resolve") || has("not known") || has("name resolution") || has("No address associated")) {
    return ConnectProblem::dns;
  }
  if (has("refused")) {
    return ConnectProblem::refused;
  }
  if (has("imeout") || has("timed out")) {
    return ConnectProblem::timeout;
  }
  if (has("No route") || has("unreachable")) {
    return ConnectProblem::no_route;
  }
  return ConnectProblem::other;
}

const char* to_string(ConnectProblem problem)
{
  switch (problem) {
  case ConnectProblem::dns:
    return "dns";
  case ConnectProblem::refused:
    return "refused";
  case ConnectProblem::timeout:
    return "timeout";
  case ConnectProblem::no_route:
    return "no_route";
  case ConnectProblem::other:
    break;
  }
  return "other";
}

Error connect_failure(std::string_view label, std::string_view why)
{
  const char* hint = "check the host name and port, and that you can reach it (VPN?)";
  switch (classify_connect_error(why)) {
  case ConnectProblem::dns:
    hint = "the name does not resolve: check its spelling; a name only the campus network knows needs the VPN";
    break;
  case ConnectProblem::refused:
    hint = "the host answered but nothing listens on that port: check the port (ssh config Port), or the VPN if "
           "the site only opens SSH to it";
    break;
  case ConnectProblem::timeout:
    hint = "no answer in time: is the host up and reachable? a firewall that only lets the VPN in looks like this; "
           "raise --connect-timeout if it is slow";
    break;
  case ConnectProblem::no_route:
    hint = "no route to the host from here: connect the VPN, or reach it through a jump host (ProxyJump)";
    break;
  case ConnectProblem::other:
    break;
  }
  return ssh_failure(ErrorCode::unreachable, label, "cannot connect", why, hint);
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
