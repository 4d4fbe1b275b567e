#pragma once
// CLI11's parse errors as rv's own: one `rv: error:` line with a did-you-mean and a hint (the
// commands, or the subcommand's --help), exit 2, and `{"error": ...}` on stdout with --json.

#include "core/result.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace rv::cli {

// The rv Error for `e`, thrown while parsing `args` (rv's own words, the user's command split
// off) with `app`. Help and version requests are not errors: handle them before calling this.
Error usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args);

} // namespace rv::cli
