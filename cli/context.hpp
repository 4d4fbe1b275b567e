#pragma once
// What every subcommand shares: global options, the layered config, and the runner.

#include "core/config.hpp"
#include "core/process/runner.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rv::cli {

// `~/x` -> `$HOME/x` (a local path from the config).
std::string expand_home(const std::string& path);

// Flags that every command takes.
struct GlobalOptions {
  // Unset optionals were not given; a given empty value is meaningful (`--ssh-config ''`).
  std::optional<std::string> host;
  std::string config_file;
  std::optional<std::string> identity_file;
  std::optional<std::string> known_hosts;
  std::optional<std::string> ssh_config;
  std::optional<std::string> connect_timeout;
  std::optional<std::string> account;
  int verbosity = 0;
  bool quiet = false;
  bool json = false;
};

// State shared by main and the subcommands.
struct Context {
  GlobalOptions global;
  Config config;
  // The user's command after `rv exec` (see cli/command_words.hpp), verbatim.
  std::vector<std::string> trailing;
  // The selected subcommand's action; returns the process exit code.
  std::function<Result<int>()> action;

  // Layers the config file, the environment and the flags into `config`.
  Result<void> load_config();
  // Creates the runner the config asks for: SSH when a host is set, else local Slurm.
  Result<std::unique_ptr<proc::Runner>> make_runner();
};

} // namespace rv::cli
