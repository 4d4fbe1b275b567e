// The GPU watchdog of the job script, run for real: bash, the fake Slurm commands and a fake
// nvidia-smi on PATH (its answers chosen per test), one-second samples.

#include "exec_fixture.hpp"

#include "core/text.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <regex>
#include <string>

using namespace rv::templates;
using namespace rv::templates::testing;
namespace model = rv::model;

namespace {

struct WatchdogRun {
  ExecFixture fx;
  RenderOptions opts = fx.options("req-wd");

  WatchdogRun()
  {
    opts.watchdog.interval_s = 1;
    opts.watchdog.nvidia_smi_timeout_s = 1;
    std::filesystem::create_directories(fx.dir / "bin");
  }

  // A fake nvidia-smi running `body` (bash), first on PATH.
  void fake_smi(const std::string& body) const
  {
    const auto file = fx.path("bin/nvidia-smi");
    rv::testing::write_text(file, "#!/bin/bash\n" + body + "\n");
    std::filesystem::permissions(file, std::filesystem::perms::owner_all);
  }

  std::string samples() const { return fx.read("rv/requests/req-wd/watchdog/node-1.samples"); }

  // Variables of the job's environment beyond the fixture's ("SLURM_JOB_GPUS=1,3 ").
  std::string extra_env;

  // Runs the single-node job `command`; its exit status.
  int run(const std::string& command, const model::Strategy& s = base_strategy())
  {
    opts.command = command;
    auto script = render(s, base_request(), opts);
    REQUIRE_MESSAGE(script.has_value(), script.error().message);
    auto file = fx.write_script("job", *script);
    const std::string path = "PATH='" + fx.path("bin") + ":" RV_SOURCE_DIR "/tests/fakes/bin:/usr/bin:/bin'";
    return ExecFixture::sh(fx.job_env("101", path + " SLURM_JOB_NODELIST=node-1 FAKE_HOSTNAMES=node-1 " + extra_env) +
                           "bash '" + file + "' >'" + fx.path("out.txt") + "' 2>'" + fx.path("err.txt") + "'");
  }
};

} // namespace

TEST_CASE("watchdog: each sample is one line of the GPUs' utilisation and memory and the log's size")
{
  WatchdogRun w;
  w.fake_smi("printf '0, 35, 1024\\n1, [N/A], 2\\n'");
  CHECK(w.run("echo hello; sleep 2.5") == 0);
  const auto text = w.samples();
  const auto lines = rv::text::lines(text);
  REQUIRE(lines.size() >= 2);
  const std::regex line(R"(t=[0-9]{10} job=101 util=35,\? mem=1024,2 log=([0-9]+))");
  std::smatch m;
  for (auto l : lines) {
    const std::string s(l);
    CAPTURE(s);
    REQUIRE(std::regex_match(s, m, line));
  }
  CHECK(std::stoll(m[1].str()) >= 0); // the logs of the fake job live elsewhere: 0 bytes here
  CHECK(w.fx.read("out.txt") == "hello\n");
}

TEST_CASE("watchdog: --idle-timeout ends a job whose GPUs stay at 0 % with exit 95 and says why")
{
  WatchdogRun w;
  w.fake_smi("printf '0, 0, 3\\n1, 0, 3\\n'");
  w.opts.watchdog.idle_timeout_s = 2;
  const auto start = std::chrono::steady_clock::now();
  CHECK(w.run("sleep 60") == k_exit_idle);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK(w.fx.read("out.txt").find("rv: watchdog: every GPU at 0 % for") != std::string::npos);
  CHECK(w.fx.read("err.txt").find("(--idle-timeout 2s); ending the job (exit 95)") != std::string::npos);
  CHECK(w.fx.read("rv/requests/req-wd/watchdog/ended.101").starts_with("95 every GPU at 0 %"));
}

TEST_CASE("watchdog: a busy GPU, a hung nvidia-smi or none at all never end the job")
{
  SUBCASE("busy")
  {
    WatchdogRun w;
    w.fake_smi("printf '0, 50, 3\\n'");
    w.opts.watchdog.idle_timeout_s = 2;
    CHECK(w.run("sleep 5; exit 3") == 3);
    CHECK(w.samples().find("util=50 mem=3") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(w.fx.path("rv/requests/req-wd/watchdog/ended.101")));
  }
  SUBCASE("hung: killed after its timeout, samples without values")
  {
    WatchdogRun w;
    w.fake_smi("exec sleep 100");
    w.opts.watchdog.idle_timeout_s = 2;
    CHECK(w.run("sleep 5") == 0);
    CHECK(w.samples().find("util=- mem=-") != std::string::npos);
  }
  SUBCASE("no nvidia-smi: no samples, no error")
  {
    WatchdogRun w;
    w.opts.watchdog.idle_timeout_s = 2;
    CHECK(w.run("sleep 3") == 0);
    CHECK_FALSE(std::filesystem::exists(w.fx.path("rv/requests/req-wd/watchdog/node-1.samples")));
    CHECK(w.fx.read("err.txt").find("watchdog") == std::string::npos);
  }
}

// N17 (security review 3): on a node without device constraints nvidia-smi lists every GPU, and
// another user's busy GPU kept an idle job alive (or their idle ones made a busy job look idle).
TEST_CASE("watchdog: only the job's own GPUs are sampled when nvidia-smi lists the node's others")
{
  SUBCASE("SLURM_JOB_GPUS picks the job's indexes out of the node's four")
  {
    WatchdogRun w;
    w.fake_smi("printf '0, 7, 100\\n1, 90, 5000\\n2, 0, 0\\n3, 80, 4000\\n'");
    w.opts.preflight = false; // its own check of granted against visible GPUs is not this test's
    w.extra_env = "SLURM_JOB_GPUS=1,3";
    CHECK(w.run("sleep 2.5") == 0);
    CHECK(w.samples().find("util=90,80 mem=5000,4000") != std::string::npos);
    CHECK(w.samples().find("util=7") == std::string::npos);
  }
  SUBCASE("a step's own GPUs win over the job's")
  {
    WatchdogRun w;
    w.fake_smi("printf '0, 7, 100\\n1, 90, 5000\\n2, 0, 0\\n3, 80, 4000\\n'");
    w.opts.preflight = false; // its own check of granted against visible GPUs is not this test's
    w.extra_env = "SLURM_JOB_GPUS=1,3 SLURM_STEP_GPUS=2";
    CHECK(w.run("sleep 2.5") == 0);
    CHECK(w.samples().find("util=0 mem=0") != std::string::npos);
  }
  SUBCASE("constrained (as many GPUs listed as granted, renumbered from 0): every one is the job's")
  {
    WatchdogRun w;
    w.fake_smi("printf '0, 40, 10\\n1, 60, 20\\n'");
    w.opts.preflight = false; // its own check of granted against visible GPUs is not this test's
    w.extra_env = "SLURM_JOB_GPUS=5,7";
    CHECK(w.run("sleep 2.5") == 0);
    CHECK(w.samples().find("util=40,60 mem=10,20") != std::string::npos);
  }
  SUBCASE("another user's busy GPU does not keep an idle job alive")
  {
    WatchdogRun w;
    w.fake_smi("printf '0, 99, 30000\\n1, 0, 3\\n'");
    w.opts.preflight = false; // its own check of granted against visible GPUs is not this test's
    w.extra_env = "SLURM_JOB_GPUS=1";
    w.opts.watchdog.idle_timeout_s = 2;
    CHECK(w.run("sleep 60") == k_exit_idle);
    CHECK(w.samples().find("util=0 mem=3") != std::string::npos);
  }
}

TEST_CASE("watchdog: rendered only for GPU jobs of a request, and the step's notice only for rv up")
{
  auto o = base_options();
  auto s = base_strategy();
  CHECK(render(s, base_request(), o)->find("_rv_wd_decider \"$$\"") != std::string::npos);
  o.watchdog.interval_s = 0;
  CHECK(render(s, base_request(), o)->find("_rv_wd_") == std::string::npos);
  o = base_options("");
  CHECK(render(s, base_request(), o)->find("_rv_wd_") == std::string::npos);
  o = base_options();
  s.gres.clear();
  s.gpus_per_node = 0;
  CHECK(render(s, base_request(), o)->find("_rv_wd_") == std::string::npos);

  s = base_strategy();
  s.nodes = 2;
  const auto multi = *render(s, base_request(), o);
  CHECK(multi.find("  _rv_wd_sampler \"$$\" </dev/null >/dev/null 2>&1 &\n") != std::string::npos); // in each task
  CHECK(multi.find("RV_WD_HANG=1") != std::string::npos);

  o.watchdog.idle_timeout_s = 600;
  CHECK(render_step_environment(base_strategy(), base_request(), o)->find("_rv_wd_") == std::string::npos);
  o.watchdog.interactive = true;
  const auto step = *render_step_environment(base_strategy(), base_request(), o);
  CHECK(step.find("/scratch/alice/.rv/requests/r20261122-ab12/watchdog/warning") != std::string::npos);
  CHECK(step.find("_rv_wd_decider") == std::string::npos);
  const auto up = *render(s, base_request(), o);
  CHECK(up.find("RV_WD_WARN=480") != std::string::npos); // 80 % of the timeout
  CHECK(up.find("RV_WD_HANG=0") != std::string::npos);   // an allocation holds its nodes quietly

  ExecFixture fx;
  auto file = fx.write_script("step", "#!/bin/bash\n" + step);
  CHECK(ExecFixture::sh("bash -n '" + file + "'") == 0);
  if (ExecFixture::sh("command -v shellcheck >/dev/null 2>&1") == 0) {
    CHECK(ExecFixture::sh("shellcheck -s bash -e SC2034 '" + file + "' >&2") ==
          0); // RV_COMMAND: the step's caller runs it
  }
}
