// The project root a command runs from: the git root or marker above the current directory,
// never the home directory, never a project the current directory is not in.

#include "app/run/launch/smart_exec.hpp"
#include "fakes/recording_runner.hpp"
#include "sync/command.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using rv::app::project_root_for;

TEST_CASE("app: smart execution picks the project root holding the current directory")
{
  char tmpl[] = "/tmp/rv-smart-test.XXXXXX";
  const fs::path base = ::mkdtemp(tmpl);
  fs::create_directories(base / "repo/.git");
  fs::create_directories(base / "repo/src/deep");
  fs::create_directories(base / "other/pkg");
  std::ofstream(base / "repo/src/train.py") << "x";
  std::ofstream(base / "other/pyproject.toml") << "[project]\n";
  std::ofstream(base / "other/pkg/run.py") << "x";

  auto r = project_root_for(base / "repo/src/deep", "../train.py", "/nonexistent-home");
  REQUIRE(r);
  CHECK(*r == base / "repo");
  auto p = project_root_for(base / "other/pkg", "run.py", "/nonexistent-home");
  REQUIRE(p);
  CHECK(*p == base / "other");
  // A script in another project than the current directory's: an error with a hint.
  auto outside = project_root_for(base / "repo/src", "../../other/pkg/run.py", "/nonexistent-home");
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message.find("outside the project") != std::string::npos);
  // No marker: the current directory itself.
  fs::create_directories(base / "plain");
  auto plain = project_root_for(base / "plain", "", "/nonexistent-home");
  REQUIRE(plain);
  CHECK(*plain == base / "plain");
  // Never the home directory (the Env's, not $HOME: the core reads no environment).
  auto home = project_root_for(base / "plain", "", (base / "plain").string());
  REQUIRE_FALSE(home);
  CHECK(home.error().hint.find("--no-sync") != std::string::npos);
  fs::remove_all(base);
}

TEST_CASE("app: a launcher naming a script that is not here is refused before the queue, with a did-you-mean")
{
  char tmpl[] = "/tmp/rv-entry-test.XXXXXX";
  const fs::path base = ::mkdtemp(tmpl);
  fs::create_directories(base / "scripts");
  std::ofstream(base / "train.py") << "x";
  std::ofstream(base / "scripts/eval.py") << "x";
  auto check = [&](std::vector<std::string> cmd) {
    auto a = rv::sync::analyze_command(cmd, [&](const std::string& p) { return fs::exists(base / p); });
    return rv::app::check_entry_exists(cmd, a, base);
  };
  auto typo = check({"python3", "trian.py"});
  REQUIRE_FALSE(typo);
  CHECK(typo.error().code == rv::ErrorCode::usage);
  CHECK(typo.error().message == "python3 trian.py: no such file in " + base.string());
  CHECK(typo.error().hint.find("did you mean train.py?") != std::string::npos);
  auto nested = check({"torchrun --nproc_per_node=2 scripts/evl.py"});
  REQUIRE_FALSE(nested);
  CHECK(nested.error().hint.find("did you mean scripts/eval.py?") != std::string::npos);
  auto far = check({"bash", "nothing-like-it.sh"});
  REQUIRE_FALSE(far);
  CHECK(far.error().hint.find("--workdir") != std::string::npos);
  // Fine: present files, modules, -c code, paths rv cannot see, tools it does not know, a cd first.
  CHECK(check({"python3", "train.py"}));
  CHECK(check({"python", "-m", "http.server"}));
  CHECK(check({"python", "-c", "print(1)"}));
  CHECK(check({"python", "/scratch/me/train.py"}));
  CHECK(check({"python", "$HOME/train.py"}));
  CHECK(check({"mytool", "missing.py"}));
  CHECK(check({"cd /scratch/me && python missing.py"}));
  CHECK(check({"sleep", "300"}));
  // #24 item 10: a program named by its relative path was queued and failed with 127 after the race.
  std::ofstream(base / "run.sh") << "x";
  auto dot = check({"./rnu.sh", "--fast"});
  REQUIRE_FALSE(dot);
  CHECK(dot.error().message.starts_with("run ./rnu.sh: no such file in " + base.string()));
  CHECK(dot.error().hint.find("did you mean ./run.sh?") != std::string::npos);
  CHECK_FALSE(check({"./nosuch.sh"}));
  CHECK_FALSE(check({"FOO=1 ./nosuch.sh x"}));
  CHECK(check({"./run.sh"}));
  fs::remove_all(base);
}

// Issue #38 item 7: the default sync root below rv's root as discovery resolved it costs no round
// trip; the login node's rule (`~`, relative = below $HOME) maps remote_root/workspaces to it.
TEST_CASE("app: the sync root below a resolved remote root is known without asking the cluster")
{
  using rv::app::workspaces_below;
  CHECK(workspaces_below("/home/u/.rv") == "/home/u/.rv/workspaces");
  CHECK(workspaces_below("/scratch/u/") == "/scratch/u/workspaces");
  CHECK(workspaces_below("~/.rv") == "~/.rv/workspaces");

  rv::test::RecordingRunner r([](const rv::proc::Command& c) {
    rv::proc::Outcome o;
    o.exit_code = 0;
    for (std::size_t i = 4; i < c.argv.size(); ++i) { // rv-resolve's paths, answered as the login node would
      o.out += (c.argv[i].starts_with("~/") ? "/home/u/" + c.argv[i].substr(2) : c.argv[i]) + '\0';
    }
    return o;
  });
  rv::app::Settings s;
  s.remote_root = "~/.rv";
  auto known = rv::app::resolve_sync_root(r, s, "/home/u/.rv");
  REQUIRE(known);
  CHECK(*known == "/home/u/.rv/workspaces");
  CHECK(r.round_trips() == 0);
  // Not resolved (no discovery): asked, and the answer is the same.
  auto asked = rv::app::resolve_sync_root(r, s, "");
  REQUIRE(asked);
  CHECK(*asked == *known);
  CHECK(r.round_trips() == 1);
  // A sync_root of its own is always asked about.
  s.sync_root = "~/ws";
  auto own = rv::app::resolve_sync_root(r, s, "/home/u/.rv");
  REQUIRE(own);
  CHECK(*own == "/home/u/ws");
  CHECK(r.round_trips() == 2);
}
