// Shell completions and the man page are generated from the CLI11 definition: these tests read a
// small definition, check what was understood, and run the generated bash and fish scripts for real.

#include "cli/cli_spec.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using rv::cli::CommandSpec;

namespace {

struct Toy {
  CLI::App app{"rv: toy launcher", "rv"};
  std::string host, time, shell, request;
  int gpus = 0;
  bool follow = false;
  std::vector<std::string> cmd;
  Toy()
  {
    app.add_option("-H,--host", host, "login host")->group("Global");
    auto* run = app.add_subcommand("run", "submit a job");
    run->add_option("-g,--gpu", gpus, "GPUs per job");
    run->add_option("-t,--time", time, "walltime");
    run->add_flag("-f,--follow", follow, "follow the winner");
    run->add_option("cmd", cmd, "the command")->required();
    auto* logs = app.add_subcommand("logs", "a request's log");
    logs->add_option("request", request, "request id");
    auto* sync = app.add_subcommand("sync", "mirror the project");
    sync->add_subcommand("push", "send the project")->add_flag("--delete", follow, "mirror with deletions");
    app.add_subcommand("secret-debug", "hidden")->group("");
  }
};

// Runs `script` with /bin/sh semantics of popen; returns stdout.
std::string capture(const std::string& command)
{
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
    out.append(buf.data(), n);
  }
  ::pclose(p);
  return out;
}

struct TempDir {
  fs::path path;
  TempDir()
  {
    std::string tmpl = (fs::temp_directory_path() / "rv-spec-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& p, const std::string& text)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

bool have(const char* program)
{
  return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0;
}

} // namespace

TEST_CASE("cli spec: subcommands, options, value placeholders and positionals are read from CLI11")
{
  Toy t;
  const CommandSpec rv = rv::cli::spec_of(t.app);
  REQUIRE(rv.subcommands.size() == 3); // the hidden one is left out
  CHECK(rv.subcommands[0].name == "run");
  CHECK(rv.subcommands[1].name == "logs");
  CHECK(rv.subcommands[2].name == "sync");
  REQUIRE(rv.options.size() == 1); // --help is not listed
  CHECK(rv.options[0].names == std::vector<std::string>{"-H", "--host"});
  CHECK(rv.options[0].value == "VALUE");

  const auto& run = rv.subcommands[0];
  REQUIRE(run.options.size() == 3);
  CHECK(run.options[0].names == std::vector<std::string>{"-g", "--gpu"});
  CHECK(run.options[0].value == "N");  // CLI11's INT, made plain
  CHECK(run.options[2].value.empty()); // a flag takes no value
  CHECK(run.positionals == std::vector<std::string>{"CMD..."});
  CHECK_FALSE(run.takes_request);
  CHECK(rv.subcommands[1].takes_request);
  REQUIRE(rv.subcommands[2].subcommands.size() == 1);
  CHECK(rv.subcommands[2].subcommands[0].options[0].names == std::vector<std::string>{"--delete"});
}

TEST_CASE("cli spec: the bash completion completes commands, nested commands, flags and request ids")
{
  Toy t;
  TempDir dir;
  write(dir.path / "rv.bash", rv::cli::completion_script(rv::cli::spec_of(t.app), "bash"));
  write(dir.path / "state/requests/3f9c02ab.json", "{}");
  write(dir.path / "state/requests/77aa0011.json", "{}");
  CHECK(capture("bash -n " + (dir.path / "rv.bash").string() + " && echo ok") == "ok\n");

  auto complete = [&](const std::string& words, int cword) {
    return capture("RV_STATE_DIR='" + (dir.path / "state").string() + "' bash -c 'source " +
                   (dir.path / "rv.bash").string() + "; COMP_WORDS=(" + words + "); COMP_CWORD=" +
                   std::to_string(cword) + "; _rv; for w in \"${COMPREPLY[@]}\"; do echo \"$w\"; done | sort'");
  };
  CHECK(complete("rv r", 1) == "run\n");
  CHECK(complete("rv run --g", 2) == "--gpu\n");
  CHECK(complete("rv sync p", 2) == "push\n");
  CHECK(complete("rv sync push --de", 3) == "--delete\n");
  CHECK(complete("rv run --ho", 2) == "--host\n"); // global flags after a command
  CHECK(complete("rv logs ''", 2).find("3f9c02ab\n77aa0011\n") != std::string::npos);
  CHECK(complete("rv run ''", 2).find("3f9c02ab") == std::string::npos); // run takes no request
  CHECK(complete("rv secret", 1).empty());                               // hidden
}

TEST_CASE("cli spec: the fish completion loads and completes")
{
  if (!have("fish")) {
    MESSAGE("SKIP: fish is not installed");
    return;
  }
  Toy t;
  TempDir dir;
  write(dir.path / "rv.fish", rv::cli::completion_script(rv::cli::spec_of(t.app), "fish"));
  write(dir.path / "state/requests/3f9c02ab.json", "{}");
  const auto f = (dir.path / "rv.fish").string();
  CHECK(capture("fish -n " + f + " && echo ok") == "ok\n");
  auto complete = [&](const std::string& line) {
    return capture("RV_STATE_DIR='" + (dir.path / "state").string() + "' fish -c 'source " + f + "; complete -C \"" +
                   line + "\"' | cut -f1 | sort");
  };
  CHECK(complete("rv ru") == "run\n");
  CHECK(complete("rv run --gp") == "--gpu\n");
  CHECK(complete("rv logs ").find("3f9c02ab\n") != std::string::npos);
}

// #24 item 12: zsh had bash's completion through bashcompinit, without descriptions.
TEST_CASE("cli spec: the zsh completion is zsh's own, with descriptions and request ids, unknown shells get nothing")
{
  if (!have("zsh")) {
    MESSAGE("SKIP: zsh is not installed");
    return;
  }
  Toy t;
  TempDir dir;
  const auto spec = rv::cli::spec_of(t.app);
  const auto zsh = rv::cli::completion_script(spec, "zsh");
  CHECK(zsh.starts_with("#compdef rv\n"));
  CHECK(zsh.find("bashcompinit") == std::string::npos);
  write(dir.path / "_rv", zsh);
  write(dir.path / "state/requests/3f9c02ab.json", "{}");
  const auto f = (dir.path / "_rv").string();
  CHECK(capture("zsh -n " + f + " && echo ok") == "ok\n");
  // _describe stubbed: the candidates it is given, one per line.
  auto complete = [&](const std::string& words) {
    return capture("RV_STATE_DIR='" + (dir.path / "state").string() + "' zsh -fc 'compdef() { :; }; source " + f +
                   "; _describe() { print -l -- \"${(@P)4}\"; }; words=(" + words + "); CURRENT=${#words}; _rv'");
  };
  const auto top = complete("rv \"\"");
  CHECK(top.find("run:submit a job\n") != std::string::npos);
  CHECK(top.find("--host:login host\n") != std::string::npos);
  CHECK(top.find("secret") == std::string::npos);
  const auto run = complete("rv run --g");
  CHECK(run.find("--gpu:GPUs per job\n") != std::string::npos);
  CHECK(run.find("--host:login host\n") != std::string::npos); // global flags after a command
  CHECK(complete("rv sync push \"\"").find("--delete:mirror with deletions\n") != std::string::npos);
  CHECK(complete("rv logs \"\"").find("3f9c02ab:request\n") != std::string::npos);
  CHECK(complete("rv run \"\"").find("3f9c02ab") == std::string::npos);
  CHECK(rv::cli::completion_script(spec, "powershell").empty());
}

TEST_CASE("cli spec: the man page lists every command and option, escaped for roff")
{
  Toy t;
  t.app.get_subcommand("logs")->description(".starts with a dot - and a dash");
  const auto page = rv::cli::man_page(rv::cli::spec_of(t.app), {{"rv run -f -- python x.py", "run it"}},
                                      "9.9.9 (commit abc, Release build)");
  CHECK(page.starts_with(".TH RV 1 \"\" \"rv 9.9.9 (commit abc, Release build)\""));
  CHECK(page.find(".SH NAME\nrv \\- toy launcher\n") != std::string::npos);
  CHECK(page.find(".SS rv run [OPTIONS] CMD...\n") != std::string::npos);
  CHECK(page.find(".SS rv sync push [OPTIONS]\n") != std::string::npos);
  CHECK(page.find("\\fB\\-g\\fR, \\fB\\-\\-gpu\\fR \\fIN\\fR") != std::string::npos);
  CHECK(page.find("\n\\&.starts with a dot \\- and a dash\n") != std::string::npos); // no roff request
  CHECK(page.find("\\fBrv run \\-f \\-\\- python x.py\\fR\nrun it\n") != std::string::npos);
  CHECK(page.find("secret") == std::string::npos);
  for (const auto& line : {".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH EXAMPLES", ".SH EXIT STATUS"}) {
    CHECK_MESSAGE(page.find(std::string("\n") + line + "\n") != std::string::npos, line);
  }
}
