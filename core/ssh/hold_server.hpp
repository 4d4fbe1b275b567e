#pragma once
// The holder: a background rv that keeps one authenticated libssh session and opens channels on
// it for other rv processes (docs/ssh.md, "One held connection"). Internal to core/ssh.

#include "core/ssh/hold_protocol.hpp"

#include <chrono>
#include <string>

namespace rv::proc::ssh {

class Session;

// Serves clients on the listening Unix socket `listen_fd` (bound at `socket_path`, which made the
// file `socket`) with the connected `session`, one channel per client connection, in one thread.
// Returns when no client came for `idle`, when a client asked it to quit, or when the session
// failed (network drop); on the way out it removes `socket_path` if it is still `socket`.
void serve_held_session(Session& session, int listen_fd, const std::string& socket_path, const hold::SocketFile& socket,
                        std::chrono::seconds idle);

} // namespace rv::proc::ssh
