#pragma once
// Smart execution: which local files a command names, also behind launchers (torchrun,
// `python -m torch.distributed.run`, `accelerate launch`, deepspeed, `python -m module`,
// `bash script.sh`). The command line is read by the one grammar in core/command/; this file
// adds the file system, asked through `exists`.

#include <functional>
#include <string>
#include <vector>

namespace rv::sync {

// Tells whether a path (as typed: relative to the current directory, or absolute) exists locally.
using ExistsFn = std::function<bool(const std::string&)>;

struct CommandAnalysis {
  std::string launcher; // "python", "torchrun", "python -m torch.distributed.run", "accelerate launch", ...
  std::string entry;    // the script or module as typed ("" = none found)
  bool entry_is_module = false;
  std::string entry_file;                  // the local file the entry resolves to ("" = not local)
  std::vector<std::string> local_files;    // every relative word or --opt=VALUE naming an existing local path
  std::vector<std::string> absolute_paths; // absolute local paths named: they do not exist on the cluster
  bool known_launcher = false; // python, a shell, a distributed launcher, or a local `./script` runs the entry
  bool names_local_file() const { return !entry_file.empty() || !local_files.empty(); }
};

// Analyses the user's command: one word is a shell command line (read by command::simple_commands),
// several are an argv.
CommandAnalysis analyze_command(const std::vector<std::string>& command, const ExistsFn& exists);

// rv's own options (from `rv_flags`, e.g. "--time", "-g") that appear in the command after its
// first word: they go to the command, not to rv. `--opt=value` counts as `--opt`.
std::vector<std::string> misplaced_rv_flags(const std::vector<std::string>& command,
                                            const std::vector<std::string>& rv_flags);

} // namespace rv::sync
