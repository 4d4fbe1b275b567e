#pragma once
// What `ps` and /proc/PID/cmdline show for a long-lived background rv (the held connection's
// holder): not the command line that happened to start it, which may hold a secret typed on it
// (security-review-3 S8). The holder cannot exec a clean `rv _hold` instead: its authenticated
// libssh session (keys, sequence numbers, channels) lives only in this process's memory.

#include <string_view>

namespace rv::proc {

// Remembers where main's argv strings lie (call it first in main, before anything keeps a
// pointer into them).
void remember_args(int argc, char** argv);

// Overwrites that area with `title` (cut to fit) and NULs: /proc/PID/cmdline, and so `ps`, show
// `title` and nothing of the original words. The environment (readable by this user only) is
// left alone. No-op when remember_args was not called.
void set_process_title(std::string_view title);

} // namespace rv::proc
