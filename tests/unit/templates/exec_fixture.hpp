#pragma once
// Runs rendered scripts with bash on this machine: SLURM_* variables faked, and fake scontrol,
// squeue, scancel, sbatch and srun (tests/fakes/bin) first on PATH. Each fixture has its own
// temp dir; nothing is written into the source tree.

#include "cases.hpp"
#include "golden.hpp"
#include "templates/render.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace rv::templates::testing {

// The script rendered from `s`, `r` and `o`; the test stops when it cannot be rendered.
inline std::string render_ok(const model::Strategy& s, const model::JobRequest& r, const RenderOptions& o)
{
  auto script = render(s, r, o);
  REQUIRE_MESSAGE(script.has_value(), script.error().message);
  return *script;
}

// How many times `needle` occurs in `text`.
inline std::size_t count(const std::string& text, const std::string& needle)
{
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

struct ExecFixture {
  std::filesystem::path dir;

  ExecFixture()
  {
    static std::atomic<int> counter{0};
    dir = std::filesystem::temp_directory_path() /
          ("rv-templates-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "logs");
  }
  // A script's background helper (the watchdog, a preflight's timeout) may still be ending and
  // writing its last file when the script returns: retry for up to a second, never throw (a throw
  // from a destructor aborted the whole test binary in CI).
  ~ExecFixture()
  {
    for (int i = 0; i < 50; ++i) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      if (!ec) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ExecFixture(const ExecFixture&) = delete;
  ExecFixture& operator=(const ExecFixture&) = delete;

  std::string path(const std::string& name) const { return (dir / name).string(); }

  // Options whose every path lies in the temp dir.
  RenderOptions options(std::string request_id = "req-1") const
  {
    auto o = base_options(std::move(request_id));
    o.log_dir = path("logs");
    o.remote_root = path("rv");
    o.checkpoint_root = path("ckpt");
    o.output_root = path("out");
    o.cache_root = path("cache");
    o.workdir = dir.string();
    return o;
  }

  // Writes `script` to <dir>/<name>.sbatch and returns the path.
  std::string write_script(const std::string& name, const std::string& script) const
  {
    auto file = path(name + ".sbatch");
    rv::testing::write_text(file, script);
    return file;
  }

  // The `env -i ...` prefix for a fake job `job_id`; `extra` adds NAME=value words.
  std::string job_env(const std::string& job_id, const std::string& extra = "") const
  {
    return "env -i PATH='" RV_SOURCE_DIR "/tests/fakes/bin:/usr/bin:/bin' HOME=/home/alice "
           "USER=alice SLURM_JOB_ID=" +
           job_id +
           " SLURM_JOB_USER=alice SLURM_JOB_NODELIST='node-[1-2]' "
           "SLURMD_NODENAME=node-1 FAKE_LOG='" +
           path("calls.log") + "' " + extra + " ";
  }

  // Runs a shell line with /bin/sh and returns its exit status.
  static int sh(const std::string& line)
  {
    int raw = std::system(line.c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  }

  std::string read(const std::string& name) const { return rv::testing::read_text(path(name)); }
};

} // namespace rv::templates::testing
