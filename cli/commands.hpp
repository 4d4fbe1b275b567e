#pragma once
// Each subcommand registers itself on the app; its action runs after parsing.

#include "cli/context.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace rv::cli {

void setup_exec(CLI::App& app, Context& ctx);
void setup_config(CLI::App& app, Context& ctx);
void setup_up(CLI::App& app, Context& ctx);
void setup_run(CLI::App& app, Context& ctx);
void setup_cost(CLI::App& app, Context& ctx);
void setup_ps(CLI::App& app, Context& ctx);
void setup_sync(CLI::App& app, Context& ctx);
void setup_env(CLI::App& app, Context& ctx);

// Prints `data` as JSON on stdout (for --json).
void print_json(const nlohmann::json& data);

} // namespace rv::cli
