#pragma once
// direct-tcpip channels on an SSH session: a byte stream to HOST:PORT as the login node sees it
// (what `ssh -L` does), for `rv forward`. Internal to core/ssh.

#include "core/ssh/stream.hpp"

#include <memory>
#include <string>

namespace rv::proc::ssh {

class Session;

// Opens a direct-tcpip channel on the connected `session` to `host`:`port`; the server connects
// to it. A refusal (the port is closed on the node, forwarding disabled) is an error naming it.
Result<std::unique_ptr<Stream>> open_forward(Session& session, const std::string& host, int port);

} // namespace rv::proc::ssh
