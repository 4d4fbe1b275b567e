#include "cli/command_words.hpp"

#include <doctest/doctest.h>

using rv::cli::split_command_words;
using V = std::vector<std::string>;

namespace {
struct Fixture {
  CLI::App app{"test"};
  std::string host, timeout;
  bool json = false;
  Fixture()
  {
    app.add_option("-H,--host", host);
    app.add_flag("--json", json);
    auto* exec = app.add_subcommand("exec");
    exec->add_option("--timeout", timeout);
    app.add_subcommand("config");
  }
};
} // namespace

TEST_CASE("command words: the user's command keeps its own flags")
{
  Fixture f;
  auto s =
      split_command_words(f.app, {"-H", "x", "exec", "--timeout", "5s", "squeue", "--version", "-u", "me"}, {"exec"});
  CHECK(s.rv_args == V{"-H", "x", "exec", "--timeout", "5s"});
  CHECK(s.command == V{"squeue", "--version", "-u", "me"});
}

TEST_CASE("command words: -- ends rv's options, and global flags may follow the subcommand")
{
  Fixture f;
  auto s = split_command_words(f.app, {"exec", "--json", "--", "--weird", "", "x y"}, {"exec"});
  CHECK(s.rv_args == V{"exec", "--json"});
  CHECK(s.command == V{"--weird", "", "x y"});
  s = split_command_words(f.app, {"--host=h", "exec", "--timeout=1s", "true"}, {"exec"});
  CHECK(s.rv_args == V{"--host=h", "exec", "--timeout=1s"});
  CHECK(s.command == V{"true"});
}

TEST_CASE("command words: other subcommands are left to CLI11 entirely")
{
  Fixture f;
  auto s = split_command_words(f.app, {"config", "show", "extra"}, {"exec"});
  CHECK(s.rv_args == V{"config", "show", "extra"});
  CHECK(s.command.empty());
  s = split_command_words(f.app, {"exec"}, {"exec"});
  CHECK(s.command.empty());
}
