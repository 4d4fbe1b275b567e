#pragma once
// The one shape of an SSH failure, and the decisions that turn libssh's answers into rv's errors
// and exit codes (docs/exit-codes.md), and what known_hosts says of the server's key (HostKeyInfo):
// pure, so each is unit-tested without a server.

#include "core/result.hpp"

#include <string>
#include <string_view>

namespace rv::proc {

// Every libssh failure is one Error: `ssh LABEL: WHAT[: WHY]`, WHY being libssh's own text.
Error ssh_failure(ErrorCode code, std::string_view label, std::string_view what, std::string_view why = {},
                  std::string hint = {});

// What known_hosts says of the server's key (libssh's ssh_known_hosts_e, as rv's own enum).
enum class KnownHost { ok, changed, other_type, not_found, unknown, error };

// What the server offered and what known_hosts says of it.
struct HostKeyInfo {
  std::string fingerprint; // "SHA256:..." as OpenSSH prints it
  std::string type;        // "ssh-ed25519", "ecdsa-sha2-nistp256", ...
  KnownHost state = KnownHost::unknown;
  std::string known_hosts_file; // checked, and written by trust_host_key()
};

// Trusts the server only when known_hosts holds its key: a changed or other-type key is
// host_key_changed (252), an unknown host or an unreadable file host_key_unknown (253). rv never
// adds a key. `fingerprint` names the offered key; `why` is libssh's text for `error`.
Result<void> host_key_verdict(KnownHost state, std::string_view label, std::string_view fingerprint,
                              std::string_view why);

// Why a connection could not be made, read from libssh's error text (`rv init` names it).
enum class ConnectProblem { dns, refused, timeout, no_route, other };
ConnectProblem classify_connect_error(std::string_view why);
// "dns", "refused", "timeout", "no_route", "other": the names `rv init --json` reports.
const char* to_string(ConnectProblem problem);

// A failed ssh_connect: unreachable (255), with a hint for the problem (a name that does not
// resolve, a port nothing listens on, no answer in time, no route; VPN where it may be the cause).
Error connect_failure(std::string_view label, std::string_view why);

// The server refused every key: auth_failed (254). `why` is libssh's text, "" when it only said no.
Error auth_failure(std::string_view label, std::string_view why);

// What a failed exec request says of its command. `refused` only when the session lives and the
// server answered no (or had closed the channel): the command did not run and may be tried on
// another channel. Otherwise (the session died once the request was written, or no answer came in
// time) it `may_have_run`, and is never sent again without the caller's consent.
enum class ExecFailure { refused, may_have_run };
ExecFailure exec_failure(bool session_alive, bool answered_no);

// An SFTP status (SSH_FX_*) in words; `session_error` when the status says no more than "failure".
std::string sftp_status_text(int status, std::string_view session_error);

// The number of a remote exit signal's name ("TERM" -> 15); 0 for none, 255 for one rv does not know.
int signal_number(std::string_view name);

} // namespace rv::proc
