#pragma once
// rv's help texts, in the layout of gh's: "Usage: rv run [OPTIONS] CMD...", the commands in
// groups, options with plain placeholders (N, DURATION, FILE), the global options, and examples
// for every command; wrapped to the terminal's width. Made from the CLI11 definition
// (cli/cli_spec.hpp), so that they never drift from the flags rv has.

#include "cli/cli_spec.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace rv::cli {

using Example = std::pair<std::string, std::string>; // command line, what it does

// The subcommand `name` of `app`, or nullptr (CLI11 2.1 throws instead).
const CLI::App* find_subcommand(const CLI::App& app, const std::string& name);

// The help of `app` ("rv" itself or a subcommand at any depth), `width` columns wide.
std::string help_text(const CLI::App& app, std::size_t width);

// The columns of the terminal: $COLUMNS, else stdout's window size, else 80; kept within 40-120.
std::size_t terminal_width();

// `text` wrapped to `width` columns; the lines after the first are indented by `indent` spaces.
std::string wrap(const std::string& text, std::size_t width, std::size_t indent);

// Every example of rv's commands, the place for new ones ("rv sync push ..." belongs to `rv sync
// push` and to `rv sync`).
const std::vector<Example>& command_examples();

// The examples of `path` ("run", "sync push").
std::vector<Example> examples_of(const std::string& path);

// The groups of rv's commands, in the order `rv --help` lists them.
const std::vector<std::pair<std::string, std::vector<std::string>>>& command_groups();

// Puts every subcommand of `app` into its group and makes help_text the help of `app` and of every
// command (call once every command is defined).
void use_rv_help(CLI::App& app);

} // namespace rv::cli
