#pragma once
// Commands on an SSH session: one channel per command (exec), many commands in one channel
// (batch), and a command attached to this terminal (PTY). Internal to core/ssh.

#include "core/process/runner.hpp"

#include <string>
#include <vector>

namespace rv::proc::ssh {

class Session;

// Runs the command line `line` on a new channel of the connected `session`; `input` goes to its
// stdin, then EOF. `cmd` gives the timeout, the interrupt policy and the output sinks. A timeout
// sends the command SIGTERM, closes the channel and returns an Outcome with `timed_out`; an
// interrupt is an `interrupted` error.
Result<Outcome> exec_line(Session& session, const std::string& line, const std::string& input, const Command& cmd);

// The one command that carries a batch of `cmds`: no limit unless some command has one (then the
// sum of theirs plus 5 s each), uninterruptible only when every command is.
Command batch_envelope(const std::vector<Command>& cmds);

// Runs `line` attached to this terminal (in a PTY, with the local terminal in raw mode, when
// stdin is a terminal); returns its exit status (255 when the server sent none).
Result<int> exec_interactive(Session& session, const std::string& line);

} // namespace rv::proc::ssh
