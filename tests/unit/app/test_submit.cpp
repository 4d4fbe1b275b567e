// Submission's one round trip before any sbatch (prepare_remote), run for real on this machine:
// rv's directories are made, and a --workdir the job could not cd to stops everything first.

#include "app/submit.hpp"
#include "core/process/local_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <unistd.h>

using namespace rv;
using namespace rv::app;

// #13: `--workdir /nonexistent` was found only by the job, after the race.
TEST_CASE("prepare_remote: a --workdir that is not a directory there is refused before anything is written")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / fmt::format("rv-submit-workdir-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "work");
  proc::LocalRunner local;
  Settings settings;
  settings.remote_root = (dir / "rv").string();

  auto missing = prepare_remote(local, settings, "abcd1234", "export A='1'\n", (dir / "nosuch").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::usage);
  CHECK(missing.error().message ==
        fmt::format("--workdir {}: no such directory on {}", (dir / "nosuch").string(), local.where()));
  CHECK(missing.error().hint.find("rv exec mkdir -p") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "rv")); // nothing was created, no secrets written

  auto present = prepare_remote(local, settings, "abcd1234", "", (dir / "work").string());
  REQUIRE_MESSAGE(present, present.error().message);
  CHECK(present->root == (dir / "rv").string());
  CHECK(fs::is_directory(dir / "rv" / "logs"));
  auto none = prepare_remote(local, settings, "abcd1234", "", "");
  CHECK(none);
  fs::remove_all(dir);
}
