// The project root a command runs from: the git root or marker above the current directory,
// never the home directory, never a project the current directory is not in.

#include "app/smart_exec.hpp"

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
