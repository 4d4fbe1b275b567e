#pragma once
// A command that goes on in the background (`rv forward`): this process forks, the child leaves
// the terminal's session and writes to a log file, and the parent learns once it is ready.

#include "core/result.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace rv::proc {

// One side of a detach: the parent gets the child's pid, the child gets 0 (its stdin is
// /dev/null, stdout and stderr append to `log_path`, it has its own session).
struct Detached {
  pid_t child = 0;
  int ready_fd = -1; // the child's end: write one byte once ready (ready()); the parent's: read it
};

// Forks. In the parent: waits until the child calls ready() (true) or exits before that (false,
// the log says why), then returns {child pid, -1}. In the child: returns {0, fd}.
Result<Detached> detach(const std::string& log_path, bool* child_ready);

// Starts `argv` (argv[0] a path, run as this same program when "/proc/self/exe") in the
// background, in a session of its own, detached twice so that no zombie is left: its stdin is
// /dev/null, stdout and stderr append to `log_path`. Returns once it is started (not waited for).
Result<void> spawn_detached(const std::vector<std::string>& argv, const std::string& log_path);

// In the child: tells the waiting parent that the background work has started.
void ready(Detached& d);

// Whether process `pid` exists (and may be signalled by us).
bool process_alive(pid_t pid);

// Sends SIGTERM to `pid`, then waits up to `wait_ms` for it to exit; whether it is gone.
bool terminate_process(pid_t pid, int wait_ms = 5000);

} // namespace rv::proc
