// rv's help (#24 item 11): gh's layout, read from the real command line (cli/app.cpp).

#include "cli/commands.hpp"
#include "cli/help.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <unistd.h>

namespace {

struct Rv {
  rv::cli::Context ctx;
  CLI::App app{"", "rv"};
  Rv() { rv::cli::define_app(app, ctx); }
  void parse(std::vector<std::string> args)
  {
    std::reverse(args.begin(), args.end()); // CLI11 takes them last first
    app.parse(args);
  }
};

// What `action` writes on stdout.
std::string stdout_of(const std::function<void()>& action)
{
  std::fflush(stdout);
  FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(::fileno(tmp), STDOUT_FILENO);
  action();
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::string out;
  std::rewind(tmp);
  for (int c = 0; (c = std::fgetc(tmp)) != EOF;) {
    out += static_cast<char>(c);
  }
  std::fclose(tmp);
  return out;
}

void each_command(const CLI::App& app, const std::function<void(const CLI::App&)>& visit)
{
  for (const auto* sub : app.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); })) {
    visit(*sub);
    each_command(*sub, visit);
  }
}

} // namespace

TEST_CASE("help: usage lines name the command and its command words")
{
  Rv rv;
  const auto run = rv::cli::help_text(*rv.app.get_subcommand("run"), 100);
  CHECK(run.find("Usage:\n  rv run [OPTIONS] CMD...\n") != std::string::npos);
  CHECK(rv::cli::help_text(*rv.app.get_subcommand("exec"), 100).find("  rv exec [OPTIONS] CMD...\n") !=
        std::string::npos);
  CHECK(rv::cli::help_text(*rv.app.get_subcommand("logs"), 100).find("  rv logs [OPTIONS] [REQUEST]\n") !=
        std::string::npos);
  const auto push = rv::cli::help_text(*rv.app.get_subcommand("sync")->get_subcommand("push"), 100);
  CHECK(push.find("  rv sync push [OPTIONS] [PATH] [REMOTE]\n") != std::string::npos);
  CHECK(run.find("Global options (before or after the command):") != std::string::npos);
  CHECK(run.find("  -H, --host HOST") != std::string::npos);
  CHECK(run.find("--gpu") < run.find("Global options")); // the command's own options first
}

TEST_CASE("help: every text fits the width, without CLI11's type noise, with an example for every command")
{
  Rv rv;
  for (const std::size_t width : {std::size_t{60}, std::size_t{80}, std::size_t{120}}) {
    std::vector<const CLI::App*> all{&rv.app};
    each_command(rv.app, [&](const CLI::App& c) { all.push_back(&c); });
    for (const auto* app : all) {
      const auto help = rv::cli::help_text(*app, width);
      CAPTURE(app->get_name());
      for (const auto& line :
           std::vector<std::string>{"INT:", " INT ", " INT\n", "TEXT", ":{", "{2}", "REQUIRED", " in ["}) {
        CHECK_MESSAGE(help.find(line) == std::string::npos, line);
      }
      std::size_t start = 0;
      while (start < help.size()) {
        auto end = help.find('\n', start);
        end = end == std::string::npos ? help.size() : end;
        const auto line = help.substr(start, end - start);
        // A line longer than the width is one word that cannot be broken (a long example).
        CHECK_MESSAGE((line.size() <= width || line.find(' ', line.find_first_not_of(' ')) == std::string::npos ||
                       line.starts_with("  $ ")),
                      line);
        start = end + 1;
      }
    }
  }
  for (const auto* sub : rv.app.get_subcommands({})) {
    CAPTURE(sub->get_name());
    if (sub->get_group().empty()) { // hidden: rv starts it itself (`_settle`); never in the help
      CHECK(sub->get_name().starts_with("_"));
      CHECK(rv::cli::help_text(rv.app, 100).find(sub->get_name()) == std::string::npos);
      continue;
    }
    CHECK(!rv::cli::examples_of(sub->get_name()).empty());
    const auto help = rv::cli::help_text(*sub, 100);
    CHECK(help.find("\n  $ rv " + sub->get_name(), help.find("\nExamples:\n  # ")) != std::string::npos);
  }
}

TEST_CASE("help: rv --help lists the commands in groups, each command in one")
{
  Rv rv;
  const auto top = rv::cli::help_text(rv.app, 100);
  CHECK(top.find("Usage:\n  rv [OPTIONS] COMMAND\n") != std::string::npos);
  CHECK(top.find("Other commands") == std::string::npos); // every command has its group
  auto at = [&](const std::string& s) { return top.find(s); };
  CHECK(at("Start here:\n  init ") < at("Run:\n  run "));
  CHECK(at("Run:\n") < at("Watch:\n  ps "));
  CHECK(at("Watch:\n") < at("Manage:\n  stop "));
  CHECK(at("Manage:\n") < at("Set up:\n  config "));
  CHECK(at("  help ") != std::string::npos);
  CHECK(at("$ rv up --dry-run -g 2 --time 3h") != std::string::npos);
  for (const auto* sub : rv.app.get_subcommands({})) {
    CHECK_MESSAGE(sub->get_group() != "Subcommands", sub->get_name());
  }
}

TEST_CASE("help: rv help [COMMAND] and rv version work as commands")
{
  {
    Rv rv;
    rv.parse({"help", "sync", "push"});
    const auto out = stdout_of([&] { CHECK(*rv.ctx.action() == 0); });
    CHECK(out.find("rv sync push [OPTIONS]") != std::string::npos);
  }
  {
    Rv rv;
    rv.parse({"help"});
    CHECK(stdout_of([&] { CHECK(*rv.ctx.action() == 0); }).find("Start here:") != std::string::npos);
  }
  {
    Rv rv;
    rv.parse({"help", "rnu"});
    auto r = rv.ctx.action();
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "rv has no command 'rnu'");
    CHECK(r.error().hint == "did you mean `rv help run`?");
  }
  {
    Rv rv;
    rv.parse({"version"});
    CHECK(stdout_of([&] { CHECK(*rv.ctx.action() == 0); }).starts_with("rv " + rv::cli::version_text()));
  }
}

// N26: `rv ssh --config FILE` was the ssh block flag and hid the global --config FILE.
TEST_CASE("help: rv ssh --config is the global config file, the ssh block is --print-config")
{
  Rv rv;
  rv.parse({"ssh", "--config", "/tmp/alt.json"});
  CHECK(rv.ctx.global.config_file == "/tmp/alt.json");
  Rv block;
  block.parse({"ssh", "--print-config", "--install"});
  CHECK(block.app.get_subcommand("ssh")->get_option("--print-config")->count() == 1);
}

TEST_CASE("help: wrap breaks at words and indents what follows")
{
  CHECK(rv::cli::wrap("one two three four five six", 20, 2) == "one two three four\n  five six");
  CHECK(rv::cli::wrap("a\nb", 20, 4) == "a\n    b");
}

// #24 item 12: request ids completed for logs, stop and why, not for gpu, ssh and forward.
TEST_CASE("help: every command that names a request completes request ids")
{
  Rv rv;
  const auto spec = rv::cli::spec_of(rv.app);
  for (const auto* name : {"logs", "stop", "why", "gpu", "ssh", "forward"}) {
    auto it =
        std::find_if(spec.subcommands.begin(), spec.subcommands.end(), [&](const auto& c) { return c.name == name; });
    REQUIRE(it != spec.subcommands.end());
    CHECK_MESSAGE(it->takes_request, name);
  }
}
