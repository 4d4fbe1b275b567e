// rv: the GPU job launcher for Slurm clusters. The one catch site for every error.

#include "cli/cli_spec.hpp"
#include "cli/command_words.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/parse_errors.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/printable.hpp"
#include "core/process/local_user.hpp"
#include "core/process/process_title.hpp"
#include "core/ssh/hold.hpp"
#include "core/store/json_bytes.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>

#ifndef RV_VERSION
#define RV_VERSION "0.0.0"
#endif

namespace {

int report(const rv::Error& error, bool json)
{
  const int code = rv::exit_code_for(error.code);
  if (json) {
    nlohmann::json out = {{"error", {{"message", error.message}, {"hint", error.hint}, {"exit_code", code}}}};
    std::fputs((rv::store::dump_for_display(out) + "\n").c_str(), stdout);
  }
  // Ctrl-C is the user's choice, not a failure: a detach ("stopped following; job 12 keeps
  // running") carries no `error:` label (ux-review-3 section 4 item 10); the exit status is still 130.
  const bool chosen = error.code == rv::ErrorCode::interrupted;
  std::fputs(fmt::format("rv: {}{}\n", chosen ? "" : "error: ", rv::printable(error.message)).c_str(), stderr);
  if (!error.hint.empty()) {
    std::fputs(fmt::format("rv: hint: {}\n", rv::printable(error.hint)).c_str(), stderr);
  }
  return code;
}

} // namespace

int main(int argc, char** argv)
{
  rv::proc::confine_name_services();   // the static binary: no NSS module is ever loaded
  rv::proc::remember_args(argc, argv); // a holder rewrites them (security-review-3 S8)
  if (argc > 1 && std::string_view(argv[1]) == "--internal-ssh-relay") {
    // rsync's remote shell through the held connection (sync/rsync.cpp): no config, no parsing.
    return rv::proc::hold::relay_main(std::vector<std::string>(argv + 2, argv + argc));
  }
  rv::cli::Context ctx;
  CLI::App app{"", "rv"};
  rv::cli::define_app(app, ctx);
  const auto& g = ctx.global;

  // The user's command is split off before CLI11 sees it, so that its flags stay its own.
  auto split =
      rv::cli::split_command_words(app, std::vector<std::string>(argv + 1, argv + argc), {"exec", "run"}, {"ssh"});
  ctx.trailing = std::move(split.command);
  std::vector<char*> rv_argv{argv[0]};
  for (auto& word : split.rv_args) {
    rv_argv.push_back(word.data());
  }
  try {
    app.parse(static_cast<int>(rv_argv.size()), rv_argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // rv's own words for CLI11's errors: a did-you-mean, the commands, --json honoured; exit 2.
    const bool json = std::find(split.rv_args.begin(), split.rv_args.end(), "--json") != split.rv_args.end();
    return report(rv::cli::usage_error(app, e, split.rv_args), json);
  }
  rv::setup_logging(g.verbosity, g.quiet || g.json);
  rv::install_interrupt_handlers();
  try {
    if (auto loaded = ctx.load_config(); !loaded && !ctx.tolerate_bad_config) {
      return report(loaded.error(), g.json);
    }
    if (g.verbosity == 0 && !g.quiet && !g.json) { // -v, -q and --json outrank the config's log_level
      rv::set_log_level(ctx.config.get("log_level"));
    }
    auto result = ctx.action();
    if (!result) {
      return report(result.error(), g.json);
    }
    return *result;
  } catch (const std::exception& e) {
    return report(rv::Error{rv::ErrorCode::generic, fmt::format("internal error: {}", e.what()),
                            "please report this with the output of -vv"},
                  g.json);
  }
}
