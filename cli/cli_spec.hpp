#pragma once
// The command-line interface as data, read from the CLI11 definition itself, and the texts made
// from it: shell completions (bash, zsh, fish) and the rv(1) man page. Generated, so they never
// drift from the flags rv really has.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace rv::cli {

struct OptionSpec {
  std::vector<std::string> names; // "-g", "--gpu"
  std::string value;              // the value's placeholder ("N", "DUR"), "" for a flag
  std::string description;
};

struct CommandSpec {
  std::string name; // "" for rv itself
  std::string description;
  std::vector<std::string> positionals; // "CMD...", "REQUEST"
  std::vector<OptionSpec> options;
  std::vector<CommandSpec> subcommands;
  bool takes_request = false; // its positional is a request id (completed from local records)
};

// Reads `app` (subcommands in definition order; help flags left out; hidden commands left out).
CommandSpec spec_of(const CLI::App& app);

// "rv sync push [OPTIONS] [PATH] [REMOTE]": `path` and what `c` takes.
std::string usage_line(const CommandSpec& c, const std::string& path);

// A completion script for `shell` ("bash", "zsh" or "fish"); "" for another shell.
std::string completion_script(const CommandSpec& rv, const std::string& shell);

// The rv(1) man page in roff, with `examples` (command, what it does) and `version`.
std::string man_page(const CommandSpec& rv, const std::vector<std::pair<std::string, std::string>>& examples,
                     const std::string& version);

// The examples shown by `rv --help` and in the man page (the README's first block).
const std::vector<std::pair<std::string, std::string>>& usage_examples();

} // namespace rv::cli
