#pragma once
// Launcher flag injection: finds torchrun, `python -m torch.distributed.run|launch`,
// `accelerate launch` and `deepspeed` in a user's shell command line and inserts the rendezvous
// flags the allocation decides, leaving every byte the user typed in place.

#include <string>
#include <string_view>
#include <vector>

namespace rv::templates {

enum class LauncherKind { none, torchrun, accelerate, deepspeed };

// The command with flags inserted, and what was inserted (for comments and tests).
struct LauncherInjection {
  std::string command;
  LauncherKind kind = LauncherKind::none; // the first launcher found
  std::vector<std::string> injected;      // flag names, e.g. "--master_port"
};

// Inserts missing launcher flags right after each launcher found at a command position
// (start of the text or after `;`, `&&`, `||`, `|`, `&`, newline, `(`), skipping leading
// `NAME=value` words and `env`/`exec`/`command`/`nohup`. A flag counts as given when it appears,
// in `-`/`_` spelling, with or without `=value`, before the first `*.py` word. The values
// reference shell variables the job sets (`$MASTER_PORT`, `$MASTER_ADDR`, `$NODE_RANK`,
// `$RV_NNODES`), so the result must be run by bash inside the job.
LauncherInjection inject_launcher_flags(std::string_view command, bool multi_node);

// Names a launcher kind for comments and tests.
const char* to_string(LauncherKind kind);

} // namespace rv::templates
