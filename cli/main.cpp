// rv: the GPU job launcher for Slurm clusters. The one catch site for every error.

#include "cli/cli_spec.hpp"
#include "cli/command_words.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/parse_errors.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/printable.hpp"
#include "core/process/ssh_hold.hpp"
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
  std::fputs(fmt::format("rv: error: {}\n", rv::printable(error.message)).c_str(), stderr);
  if (!error.hint.empty()) {
    std::fputs(fmt::format("rv: hint: {}\n", rv::printable(error.hint)).c_str(), stderr);
  }
  return code;
}

// "Examples:" and the README's first commands, for `rv --help`.
std::string examples_footer()
{
  size_t width = 0;
  for (const auto& example : rv::cli::usage_examples()) {
    width = std::max(width, example.first.size());
  }
  std::string out = "Examples:";
  for (const auto& [cmd, what] : rv::cli::usage_examples()) {
    out += fmt::format("\n  {:<{}}  {}", cmd, width, what);
  }
  return out;
}

} // namespace

int main(int argc, char** argv)
{
  if (argc > 1 && std::string_view(argv[1]) == "--internal-ssh-relay") {
    // rsync's remote shell through the held connection (sync/rsync.cpp): no config, no parsing.
    return rv::proc::hold::relay_main(std::vector<std::string>(argv + 2, argv + argc));
  }
  rv::cli::Context ctx;
  CLI::App app{"rv: get a GPU job running on a Slurm cluster as soon as the cluster can start it", "rv"};
  app.set_version_flag("-V,--version", "rv " + rv::cli::version_text());
  app.require_subcommand(1);
  app.fallthrough();

  auto& g = ctx.global;
  app.add_option("-H,--host", g.host, "login node: [user@]host[:port] or an ~/.ssh/config alias (env RV_HOST)");
  app.add_option("--config", g.config_file, "config file (default $XDG_CONFIG_HOME/rv/config.json; env RV_CONFIG)");
  app.add_option("-i,--identity", g.identity_file, "SSH private key to use");
  app.add_option("--known-hosts", g.known_hosts, "known_hosts file to verify the host key against");
  app.add_option("--ssh-config", g.ssh_config, "OpenSSH client config to honour (default ~/.ssh/config)");
  app.add_option("--connect-timeout", g.connect_timeout, "SSH connect timeout, e.g. 15s");
  app.add_option("-A,--account", g.account, "Slurm account");
  app.add_flag("-v,--verbose", g.verbosity, "more logging on stderr (-vv for trace)");
  app.add_flag("-q,--quiet", g.quiet, "nothing but results, the job's output, warnings and errors");
  app.add_flag("--json", g.json, "print results (and errors) as JSON on stdout");

  rv::cli::setup_exec(app, ctx);
  rv::cli::setup_up(app, ctx);
  rv::cli::setup_run(app, ctx);
  rv::cli::setup_cost(app, ctx);
  rv::cli::setup_ps(app, ctx);
  rv::cli::setup_why(app, ctx);
  rv::cli::setup_stats(app, ctx);
  rv::cli::setup_stop(app, ctx);
  rv::cli::setup_logs(app, ctx);
  rv::cli::setup_gpu(app, ctx);
  rv::cli::setup_sync(app, ctx);
  rv::cli::setup_config(app, ctx);
  rv::cli::setup_env(app, ctx);
  rv::cli::setup_doctor(app, ctx);
  rv::cli::setup_ssh(app, ctx);
  rv::cli::setup_forward(app, ctx);
  rv::cli::setup_status(app, ctx);
  rv::cli::setup_completion(app, ctx);
  rv::cli::setup_init(app, ctx);
  rv::cli::setup_connect(app, ctx);
  app.footer(examples_footer());
  rv::cli::add_global_options_footer(app); // `rv run --help` lists -H, --json, -v, ... too

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
