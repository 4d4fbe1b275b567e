#pragma once
// Launcher flag injection: finds torchrun, `python -m torch.distributed.run|launch`,
// `accelerate launch` and `deepspeed` in a user's shell command line and inserts the rendezvous
// flags the allocation decides, leaving every byte the user typed in place.

#include "core/command/grammar.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rv::templates {

using command::LauncherKind;
using command::to_string;

// The command with flags inserted, and what was inserted (for comments and tests).
struct LauncherInjection {
  std::string command;
  LauncherKind kind = LauncherKind::none; // the first launcher found
  std::vector<std::string> injected;      // flag names, e.g. "--master_port"
};

// Inserts missing launcher flags right after each launcher of the command line, as the one
// grammar in core/command/ finds it (each simple command, after assignments and wrappers such as
// `env`, `time`, `nohup`, `uv run`). A flag counts as given when it appears, in `-`/`_` spelling,
// with or without `=value`, among the launcher's own options (before its script or module). The values
// reference shell variables the job sets (`$MASTER_PORT`, `$MASTER_ADDR`, `$NODE_RANK`,
// `$RV_NNODES`), so the result must be run by bash inside the job.
LauncherInjection inject_launcher_flags(std::string_view line, bool multi_node);

} // namespace rv::templates
