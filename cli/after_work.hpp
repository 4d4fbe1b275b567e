#pragma once
// A command's after-work (app/run/after_work.hpp) in a background rv: once the command has
// answered, this process forks; the child (no terminal, its log in rv's state directory) owns the
// connection from then on and does the work; this process ends at once with the command's exit
// status, without closing the connection (as `rv forward` hands its session to its child).

#include "cli/context.hpp"

namespace rv::cli {

// In a background child (proc::detach): closes every inherited descriptor above stderr that is a
// regular file (a caller's flock'd lock file above all); sockets and pipes stay.
void close_inherited_files();

// With `result` a success and after-work to do (and RV_AFTER_WORK not 0): forks; the parent never
// returns (it exits with *result), the child does the work and returns `result`. Otherwise (a
// failure, nothing to do, the fork failed) returns `result` at once.
Result<int> finish_in_background(RealEnv& real, Result<int> result);

} // namespace rv::cli
