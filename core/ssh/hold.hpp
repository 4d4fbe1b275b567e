#pragma once
// Finding, starting and listing held connections (docs/ssh.md, "One held connection").
// Internal to core/ssh except for what the CLI needs (status, disconnect, the rsync relay).

#include "core/ssh/hold_client.hpp"
#include "core/ssh/options.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rv::proc {
namespace ssh {
class Session;
}

namespace hold {

// The private directory for `options` (runtime_dir; created 0700; refused when another user owns
// it, others may enter it or it is a symlink); with `create` false, a missing directory is an
// error. One too long for a Unix socket's path is replaced by a mkdtemp directory in /tmp, its
// name kept in it (said once, when made).
Result<std::string> private_dir(const SshOptions& options, bool create = true);

// The socket path of the connection `options` opens.
Result<std::string> socket_path(const SshOptions& options, bool create = true);

// A live holder for `options` (it answered), or nullopt.
std::optional<Client> find_live(const SshOptions& options);

// The held connection for `options`: a live holder's client; else `session` is connected here
// (a second factor is asked here, on this terminal) and handed to a new background holder. A
// stale socket (its process gone or not answering) is replaced. Starting is serialized by a
// lock file, so two rv processes started together share one holder.
Result<Client> held_connection(ssh::Session& session, const SshOptions& options);

// Every holder in `dir`: its status ({"label", "pid", "started", "channels", ...,
// "socket"}), or {"socket", "stale": true} for a socket nobody answers on.
std::vector<nlohmann::json> list_holders(const std::string& dir);

// Asks the holder at `socket` to end; whether one answered.
bool quit_holder(const std::string& socket);

// rsync's remote shell: `rv --internal-ssh-relay SOCKET [-l USER] HOST COMMAND...` runs COMMAND (its words
// joined with spaces, as ssh does) through the holder, relaying stdin, stdout and stderr; returns
// the exit status (255 when the holder cannot be reached, as ssh does).
int relay_main(const std::vector<std::string>& args);

// The `-e` command's words rsync runs to reach the holder at `socket`: this rv binary as the relay.
std::vector<std::string> relay_command(const std::string& socket);

} // namespace hold
} // namespace rv::proc
