// CLI11's parse errors in rv's words (cli/parse_errors.hpp), on an app shaped like rv's.

#include "cli/commands.hpp"
#include "cli/parse_errors.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <optional>

using rv::ErrorCode;

namespace {

struct Toy {
  CLI::App app{"toy", "rv"};
  std::optional<std::string> host;
  bool json = false;
  int gpu = 0;
  std::string time;
  bool all = false;
  Toy()
  {
    app.require_subcommand(1);
    app.fallthrough();
    app.add_option("-H,--host", host, "login node");
    app.add_flag("--json", json, "json");
    auto* run = app.add_subcommand("run", "run");
    run->add_option("-g,--gpu", gpu, "gpus");
    run->add_option("--time", time, "time");
    auto* ps = app.add_subcommand("ps", "ps");
    ps->add_flag("-a,--all", all, "all");
    auto* sync = app.add_subcommand("sync", "sync");
    sync->require_subcommand(1);
    sync->add_subcommand("push", "push");
    sync->add_subcommand("pull", "pull");
  }

  // The error parsing `args` gives, in rv's words.
  std::optional<rv::Error> error(std::vector<std::string> args)
  {
    std::vector<std::string> argv = {"rv"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> ptrs;
    for (auto& a : argv) {
      ptrs.push_back(a.data());
    }
    try {
      app.parse(static_cast<int>(ptrs.size()), ptrs.data());
    } catch (const CLI::ParseError& e) {
      return rv::cli::usage_error(app, e, args);
    }
    return std::nullopt;
  }
};

} // namespace

TEST_CASE("parse errors: unknown commands and flags get rv's words, a did-you-mean, exit 2")
{
  struct Case {
    std::vector<std::string> args;
    const char* message;
    const char* hint_part;
  };
  const Case cases[] = {
      {{}, "rv needs a command", "commands: run, ps, sync"},
      {{"foo"}, "unknown command 'foo'", "commands: run, ps, sync"},
      {{"rnu", "-g", "1"}, "unknown command 'rnu'", "did you mean `rv run`?"},
      {{"-H", "login", "pss"}, "unknown command 'pss'", "did you mean `rv ps`?"}, // -H's value is no command
      {{"--hlep"}, "rv has no option --hlep", "did you mean --help?"},
      {{"run", "--gpus", "2"}, "rv run has no option --gpus", "did you mean --gpu?"},
      {{"run", "--tiem=2h"}, "rv run has no option --tiem", "did you mean --time?"},
      {{"ps", "--al"}, "rv ps has no option --al", "did you mean --all?"},
      {{"ps", "extra"}, "rv ps: unexpected argument 'extra'", "`rv ps --help`"},
      {{"sync"}, "rv sync needs one of: push, pull", "`rv sync --help`"},
      {{"sync", "psh"}, "rv sync has no command 'psh'", "did you mean `rv sync push`?"},
      {{"run", "-g", "abc"}, "--gpu takes a whole number, not 'abc'", "`rv run --help`"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args.empty() ? std::string("(none)") : c.args.front());
    Toy toy;
    auto e = toy.error(c.args);
    REQUIRE(e);
    CHECK(e->code == ErrorCode::usage);
    CHECK(rv::exit_code_for(e->code) == 2);
    CHECK(e->message.find(c.message) == 0);
    CHECK(e->hint.find(c.hint_part) != std::string::npos);
    CHECK(e->message.find("A subcommand is required") == std::string::npos);
  }
}

// #24 item 12: `rv sync pull` answered CLI11's "remote is required", `--gpu abc` "Could not
// convert: --gpu = abc".
TEST_CASE("parse errors: a missing argument is named with an example, a bad number says what it takes")
{
  auto error = [](std::vector<std::string> args) -> std::optional<rv::Error> {
    rv::cli::Context ctx;
    CLI::App app{"", "rv"};
    rv::cli::define_app(app, ctx);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError& e) {
      return rv::cli::usage_error(app, e, args);
    }
    return std::nullopt;
  };
  auto pull = error({"sync", "pull"});
  REQUIRE(pull);
  CHECK(pull->message == "rv sync pull needs REMOTE: request id (its winner's --output files), or a remote path");
  CHECK(pull->hint == "e.g. rv sync pull 3f9c02ab (`rv sync pull --help` shows its usage)");
  auto shell = error({"completion"});
  REQUIRE(shell);
  CHECK(shell->message == "rv completion needs SHELL: bash, zsh or fish");
  auto gpu = error({"up", "--gpu", "abc"});
  REQUIRE(gpu);
  CHECK(gpu->message == "--gpu takes a whole number, not 'abc'");
  CHECK(gpu->hint.starts_with("e.g. rv up "));
}
