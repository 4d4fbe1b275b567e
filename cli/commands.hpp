#pragma once
// Each subcommand registers itself on the app; its action runs after parsing.

#include "cli/context.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace rv::cli {

// rv's global options and every command on `app` (an App named "rv"); actions go into ctx.action.
void define_app(CLI::App& app, Context& ctx);

void setup_exec(CLI::App& app, Context& ctx);
void setup_config(CLI::App& app, Context& ctx);
void setup_up(CLI::App& app, Context& ctx);
void setup_run(CLI::App& app, Context& ctx);
void setup_cost(CLI::App& app, Context& ctx);
void setup_ps(CLI::App& app, Context& ctx);
void setup_why(CLI::App& app, Context& ctx);
void setup_stats(CLI::App& app, Context& ctx);
void setup_stop(CLI::App& app, Context& ctx);
void setup_logs(CLI::App& app, Context& ctx);
void setup_gpu(CLI::App& app, Context& ctx);
void setup_sync(CLI::App& app, Context& ctx);
void setup_env(CLI::App& app, Context& ctx);
void setup_ssh(CLI::App& app, Context& ctx);
void setup_forward(CLI::App& app, Context& ctx);
void setup_status(CLI::App& app, Context& ctx);
void setup_completion(CLI::App& app, Context& ctx);
void setup_init(CLI::App& app, Context& ctx);
void setup_doctor(CLI::App& app, Context& ctx);
void setup_help(CLI::App& app, Context& ctx); // `rv help` and `rv version`
void setup_connect(CLI::App& app, Context& ctx);
void setup_settle(CLI::App& app, Context& ctx); // hidden: the background rv of a race across clusters

// "0.1.0 (commit 1a2b3c4d5e, Release build)": what `rv --version` prints after "rv ".
std::string version_text();
// What `rv --version` and `rv version` print after that line, as key and value: the build date,
// the target triple, static or dynamic, and whether Kerberos is available (in the static binary
// that loads libgssapi_krb5.so.2, so only these commands ask, never every start).
std::vector<std::pair<std::string, std::string>> version_details();
// "rv <version_text>\n" and one "key: value" line per detail.
std::string version_long_text();

// Prints `data` as JSON on stdout (for --json).
void print_json(const nlohmann::json& data);

} // namespace rv::cli
