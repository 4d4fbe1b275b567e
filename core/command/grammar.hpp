#pragma once
// What a simple command runs, read once for every folder: the words before the program
// (assignments, reserved words, wrappers such as `env`, `time`, `nohup`, `uv run`), which names are
// python interpreters, shells and distributed launchers, how each takes its own options, and
// the entry it runs (a script, a module, another program, a shell line). sync/ asks it which
// local files a command names; templates/ asks it where to insert launcher flags.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rv::command {

// The distributed launchers whose rendezvous flags rv knows.
enum class LauncherKind { none, torchrun, accelerate, deepspeed };

// Names a launcher kind for comments and tests.
const char* to_string(LauncherKind kind);

enum class ProgramKind {
  other,    // anything else (`nvidia-smi`, `./run.sh`, `mytool`)
  python,   // python, python3, python3.12, python3.13t, /opt/bin/python3 (by the last path part)
  shell,    // bash, sh, zsh, dash
  launcher, // torchrun, deepspeed, `accelerate launch`, `python -m torch.distributed.run` ...
};

enum class EntryKind {
  none,           // nothing to run was found (`python -`, `torchrun --help`)
  script,         // a file the program runs (`train.py`, `run.sh`)
  module,         // a python module (`-m pkg.cli`)
  program,        // another program with its arguments, from `entry_at` on (`--no_python`)
  command_string, // python's `-c CODE`: nothing to find
  shell_line,     // a shell's `-c LINE`: `entry` is the line, to be read again
};

struct Invocation {
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::size_t program = npos; // the program's word; npos = only assignments and wrappers
  ProgramKind kind = ProgramKind::other;
  LauncherKind launcher = LauncherKind::none;
  // What runs the entry: the program's last path part, or "accelerate launch",
  // "python -m torch.distributed.run" for a launcher named by more than one word.
  std::string name;
  std::size_t args = 0; // the first word after those that name the program (its options start here)
  EntryKind entry_kind = EntryKind::none;
  std::size_t entry_at = npos; // the entry's word
  std::string entry;           // the script, module or shell line (`-mpkg` gives "pkg")
};

// Reads the simple command `words` (an argv, or `SimpleCommand::argv()`) from word `from` on.
Invocation invocation(const std::vector<std::string>& words, std::size_t from = 0);

// True for python interpreters, by the last path part: python, python3, python3.12, python3.13t.
bool is_python(std::string_view program);

// The last part of a path (`/opt/bin/torchrun` -> `torchrun`).
std::string_view base_name(std::string_view word);

} // namespace rv::command
