#pragma once
// `rv exec CMD...` and `rv run CMD...`: everything from the first word of the user's command on
// belongs to that command, whatever flags it holds (`rv exec squeue --version`).

#include <CLI/CLI.hpp>

#include <set>
#include <string>
#include <vector>

namespace rv::cli {

struct SplitArgs {
  std::vector<std::string> rv_args; // what CLI11 parses
  std::vector<std::string> command; // the user's command, verbatim ("" words kept)
};

// Splits `args` (without argv[0]) at the user's command: the first word after one of the
// subcommands named in `takes_command` that is not one of rv's options (or its value), or the
// word after `--`.
SplitArgs split_command_words(const CLI::App& app, const std::vector<std::string>& args,
                              const std::set<std::string>& takes_command,
                              const std::set<std::string>& after_dashes = {});

} // namespace rv::cli
