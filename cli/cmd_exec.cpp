// `rv exec CMD...`: run a command on the login node, stream its output, return its status.

#include "cli/commands.hpp"
#include "core/duration.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <unistd.h>

namespace rv::cli {
namespace {

struct ExecOptions {
  std::vector<std::string> command;
  std::string timeout;
};

void write_all(int fd, std::string_view data)
{
  while (!data.empty()) {
    auto n = ::write(fd, data.data(), data.size());
    if (n <= 0) {
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

Result<int> run_exec(const ExecOptions& opts, Context& ctx)
{
  proc::Command cmd;
  // One word is a shell command line, as with ssh; several words are an exact argv.
  if (opts.command.size() == 1) {
    cmd.argv = {"/bin/sh", "-c", opts.command.front()};
  } else {
    cmd.argv = opts.command;
  }
  cmd.timeout = std::chrono::milliseconds(0);
  if (!opts.timeout.empty()) {
    RV_TRY(secs, parse_duration(opts.timeout));
    cmd.timeout = std::chrono::seconds(secs);
  }
  if (!ctx.global.json) {
    cmd.on_stdout = [](std::string_view s) { write_all(1, s); };
    cmd.on_stderr = [](std::string_view s) { write_all(2, s); };
  }
  RV_TRY(runner, ctx.make_runner());
  RV_TRY(outcome, runner->run(cmd));
  if (outcome.timed_out) {
    if (ctx.global.json) {
      print_json({{"exit_code", nullptr}, {"timed_out", true}, {"stdout", outcome.out}, {"stderr", outcome.err}});
    }
    return fail(ErrorCode::timeout, fmt::format("command timed out after {} on {}", opts.timeout, runner->where()),
                "raise --timeout");
  }
  if (ctx.global.json) {
    print_json({{"exit_code", outcome.status()},
                {"signal", outcome.signal},
                {"stdout", outcome.out},
                {"stderr", outcome.err}});
  }
  return outcome.status();
}

} // namespace

void setup_exec(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<ExecOptions>();
  auto* cmd = app.add_subcommand("exec", "run a command on the login node and return its exit status");
  cmd->footer("One argument is a shell command line (`rv exec 'squeue -u $USER | wc -l'`); several\n"
              "arguments are passed as an exact argv. Use -- before commands that take flags.");
  cmd->add_option("--timeout", opts->timeout, "kill the command after this long (30s, 5m)")->type_name("DURATION");
  // main.cpp splits the command off (cli/command_words.hpp): its flags never reach CLI11.
  cmd->callback([&ctx, opts] {
    ctx.action = [&ctx, opts] {
      opts->command = ctx.trailing;
      if (opts->command.empty()) {
        return Result<int>(fail(ErrorCode::usage, "rv exec needs a command", "rv exec -- squeue -u $USER"));
      }
      return run_exec(*opts, ctx);
    };
  });
}

} // namespace rv::cli
