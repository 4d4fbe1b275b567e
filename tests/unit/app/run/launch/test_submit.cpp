// Submission's one round trip before any sbatch (prepare_remote), run for real on this machine:
// rv's directories are made, and a --workdir the job could not cd to stops everything first.

#include "app/run/launch/submit.hpp"
#include "core/process/local_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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

// #12's one round trip, run by a real shell: the guard lets a command through only after the
// preparation of the same batch created the marker, last; a stale marker never lets one through.
TEST_CASE("prepare_command + guarded: the sbatch of a batch runs only after rv's directories were prepared")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / fmt::format("rv-submit-guard-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  proc::LocalRunner local;
  const std::string root = (dir / "rv").string();
  const std::string ran = (dir / "ran").string();
  proc::Command touch;
  touch.argv = {"sh", "-c", "cat >\"$1\"", "rv-test", ran};
  touch.stdin_data = "script on stdin\n";
  Preparation prep;
  prep.marker_id = "abcd1234";
  prep.secrets = "export A='1'\n";
  prep.secrets_id = "abcd1234";

  SUBCASE("prepared: the guarded command runs with its argv and stdin")
  {
    auto outs = local.run_batch({prepare_command(root, "", prep), guarded(touch, marker_path(root, "abcd1234"))});
    REQUIRE(outs);
    auto paths = read_prepared((*outs)[0], root, prep, local.where());
    REQUIRE_MESSAGE(paths, paths.error().message);
    CHECK(paths->cache == root + "/cache");
    CHECK((*outs)[1].exit_code == 0);
    CHECK(fs::exists(marker_path(root, "abcd1234")));
    CHECK(fs::exists(dir / "rv" / "requests" / "abcd1234" / "env"));
    std::ifstream in(ran);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "script on stdin\n");
  }
  SUBCASE("not prepared (the root is a file): the guard refuses, the command never runs")
  {
    std::ofstream(dir / "rv") << "not a directory";
    auto outs = local.run_batch({prepare_command(root, "", prep), guarded(touch, marker_path(root, "abcd1234"))});
    REQUIRE(outs);
    CHECK_FALSE(read_prepared((*outs)[0], root, prep, local.where()));
    CHECK((*outs)[1].exit_code == k_not_prepared);
    CHECK((*outs)[1].err.find("rv's directories were not prepared") != std::string::npos);
    CHECK_FALSE(fs::exists(ran));
  }
  SUBCASE("a stale marker from before is removed first: a missing workdir still stops the sbatch")
  {
    fs::create_directories(dir / "rv" / "requests" / "abcd1234");
    std::ofstream(marker_path(root, "abcd1234")) << "";
    prep.workdir = (dir / "nosuch").string();
    auto outs = local.run_batch({prepare_command(root, "", prep), guarded(touch, marker_path(root, "abcd1234"))});
    REQUIRE(outs);
    auto paths = read_prepared((*outs)[0], root, prep, local.where());
    REQUIRE_FALSE(paths);
    CHECK(paths.error().code == ErrorCode::usage);
    CHECK((*outs)[1].exit_code == k_not_prepared);
    CHECK_FALSE(fs::exists(ran));
  }
  fs::remove_all(dir);
}

// N7: the cache root (scratch_root, default <scratch>/.cache/rv from rv init) was made with the
// login umask and never chmodded: the HF cache, a job's HF token and private wheels were readable
// by whoever can traverse the scratch directory.
TEST_CASE("prepare_command: the cache root and the directories it creates are private")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / fmt::format("rv-submit-private-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "scratch");
  fs::permissions(dir / "scratch", fs::perms(0755));
  fs::create_directories(dir / "old-cache");
  fs::permissions(dir / "old-cache", fs::perms(0755)); // made by an older rv
  proc::LocalRunner local;
  const std::string root = (dir / "rv").string();
  auto mode = [](const fs::path& p) { return fs::status(p).permissions() & fs::perms::all; };
  for (const auto& cache : {dir / "scratch" / ".cache" / "rv", dir / "old-cache"}) {
    CAPTURE(cache.string());
    auto out = local.run(prepare_command(root, cache.string(), Preparation{}));
    REQUIRE(out);
    REQUIRE_MESSAGE(out->ok(), out->err);
    CHECK(mode(cache) == fs::perms(0700));
    CHECK(mode(dir / "rv") == fs::perms(0700));
    CHECK(mode(dir / "rv" / "logs") == fs::perms(0700));
  }
  CHECK(mode(dir / "scratch" / ".cache") == fs::perms(0700)); // a parent rv made
  CHECK(mode(dir / "scratch") == fs::perms(0755));            // one it did not make is left alone
  fs::remove_all(dir);
}

// UX review 3, N7: `python train.py` on a login node with only python3 cost a full race (every
// strategy submitted, a GPU won, then `python: command not found`, exit 127). The program is
// looked up in the submission's own round trip, by a real shell; nothing is written when it is
// missing, and `python3` is named when it is there.
TEST_CASE("prepare_command: the command's program is looked up first, a missing one submits nothing")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / fmt::format("rv-submit-program-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "venv" / "bin");
  auto exe = [](const fs::path& p) {
    std::ofstream(p) << "#!/bin/sh\n";
    fs::permissions(p, fs::perms::owner_all);
  };
  exe(dir / "bin" / "rvtoolx3");         // on the PATH: rvtoolx3, not rvtoolx
  exe(dir / "venv" / "bin" / "rvvenvx"); // only in the project's venv
  proc::LocalRunner local;
  const std::string root = (dir / "rv").string();
  auto prepare = [&](const std::string& program, const std::string& venv) {
    Preparation prep;
    prep.marker_id = "abcd1234";
    prep.program = program;
    prep.venv = venv;
    auto cmd = prepare_command(root, "", prep);
    // The login node's PATH, with the test's bin first.
    cmd.argv[2] = "PATH='" + (dir / "bin").string() + "':\"$PATH\"; " + cmd.argv[2];
    auto out = local.run(cmd);
    REQUIRE(out);
    return std::pair{read_prepared(*out, root, prep, local.where()), prep};
  };
  auto [missing, p1] = prepare("rvtoolx", "");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::usage);
  CHECK(missing.error().message ==
        fmt::format("rvtoolx: command not found on {}; nothing was submitted", local.where()));
  CHECK(missing.error().hint == "did you mean rvtoolx3? (rv run ... rvtoolx3 ...)");
  CHECK_FALSE(fs::exists(marker_path(root, "abcd1234"))); // no sbatch of the batch can run
  CHECK_FALSE(fs::exists(dir / "rv"));
  auto [unknown, p2] = prepare("rvnosuchtool", (dir / "venv").string());
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("(nor in the project's venv)") != std::string::npos);
  CHECK(unknown.error().hint.find("--setup") == std::string::npos);
  CHECK(unknown.error().hint.find("rv exec command -v NAME") != std::string::npos);
  auto [on_path, p3] = prepare("rvtoolx3", "");
  CHECK_MESSAGE(on_path, on_path.error().message);
  CHECK(fs::exists(marker_path(root, "abcd1234")));
  auto [in_venv, p4] = prepare("rvvenvx", (dir / "venv").string());
  CHECK_MESSAGE(in_venv, in_venv.error().message);
  auto [builtin, p5] = prepare("echo", "");
  CHECK(builtin);
  fs::remove_all(dir);
}

TEST_CASE("program_to_check: a plain program name is checked, what sh alone can resolve is not")
{
  RunExtras none;
  CHECK(program_to_check("python train.py --lr 3e-4", none) == "python");
  CHECK(program_to_check("CUDA_VISIBLE_DEVICES=0 torchrun --nproc_per_node 4 train.py", none) == "torchrun");
  CHECK(program_to_check("cd src && python3 -m pkg", none) == "cd");
  CHECK(program_to_check("./train.sh", none).empty());
  CHECK(program_to_check("$HOME/bin/tool x", none).empty());
  CHECK(program_to_check("[[ -f x ]] && python a.py", none).empty());
  CHECK(program_to_check("f() { echo hi; }; f", none).empty());
  CHECK(program_to_check("(cd x && make)", none).empty());
  RunExtras in_job;
  in_job.setup = "uv pip install -r requirements.txt\n";
  CHECK(program_to_check("python train.py", in_job).empty());
}
