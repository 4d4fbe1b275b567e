// `rv up` against a scripted cluster: the step that joins the allocation gets the job's
// environment (the batch script's variables, launcher flags, working directory and secrets),
// and `--json --run` runs the command, reports it in one document and releases the allocation.

#include "app/run/launch/launch.hpp"
#include "app/run/launch/smart_exec.hpp"
#include "core/process/local_runner.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

namespace {

// Scripts an `rv up` of one strategy (job 1301) whose step is answered with `step_out`; `srun`
// receives the step's argv.
void script_up(World& w, std::vector<std::string>& srun, const std::string& step_out = "ran\n")
{
  expect_prepare(w.cluster, (w.dir / "rv").string());
  expect_sbatch(w.cluster, "1301");
  expect_win(w.cluster, "1301", squeue_row("1301", "RUNNING", "a100-1"), "1301");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  w.cluster.on(
      [&srun](const auto& a) {
        srun = a;
        return a.front() == "srun";
      },
      Cluster::ok(step_out));
  w.cluster.on([](const auto& a) { return has(a, "scancel") && has(a, "1301"); }, Cluster::ok());
}

PlanRun one_strategy()
{
  auto planned = two_strategies();
  planned.plan.strategies.resize(1); // a100: 2 GPUs, 16 CPUs
  return planned;
}

// `rv up [--run command]` of a project (snapshot directory snap/src, a secret HF_TOKEN) won and
// released; returns the step's working directory.
std::filesystem::path up_in_project(World& w, std::vector<std::string>& srun, const std::string& command)
{
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  script_up(w, srun);
  w.cluster.on([](const auto& a) { return has(a, "rv-rm"); }, Cluster::ok());
  const auto workdir = w.dir / "snap" / "src";
  std::filesystem::create_directories(workdir);
  RunExtras extras;
  extras.project_key = "proj-0123";
  auto rc = launch_up(w.env, one_strategy(), command, workdir.string(), extras);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  return workdir;
}

} // namespace

// #13: `rv up --run` ran in $HOME without RV_CHECKPOINT_DIR, OMP_NUM_THREADS or MASTER_PORT.
TEST_CASE("rv up --run: the step runs the command in the job's environment and directory, with the secrets")
{
  World w("up-env");
  std::vector<std::string> srun;
  const auto workdir = up_in_project(w, srun, "torchrun --nproc_per_node=2 train.py");
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE(mentions(argv, "hf_x")); // the secrets travel by file name only
  }
  // The step: srun --jobid=1301 --overlap --nodes=1 --ntasks=1 bash -c PROGRAM. Run PROGRAM here
  // for real, with a stand-in torchrun that reports what it was given.
  REQUIRE(srun.size() == 8);
  CHECK(srun[1] == "--jobid=1301");
  CHECK(srun[5] == "bash");
  const auto rid = w.record()["id"].get<std::string>();
  const auto secrets = w.dir / "rv" / "requests" / rid / "env";
  const auto bin = w.dir / "bin";
  std::filesystem::create_directories(bin);
  std::filesystem::create_directories(secrets.parent_path());
  std::ofstream(bin / "torchrun") << "#!/bin/sh\n"
                                     "[ -n \"$MASTER_PORT\" ] && [ \"$1\" = \"--master_port=$MASTER_PORT\" ] && shift\n"
                                     "printf '%s|' \"$PWD\" \"$*\" \"$OMP_NUM_THREADS\" \"$RV_CHECKPOINT_DIR\" "
                                     "\"$RV_REQUEST_ID\" \"$HF_TOKEN\"\nexit 7\n";
  std::filesystem::permissions(bin / "torchrun", std::filesystem::perms::owner_all);
  auto run_step = [&] {
    proc::LocalRunner local;
    proc::Command c;
    const char* path = std::getenv("PATH");
    c.argv = {"env",  "-u", "SLURM_JOB_ID", "PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin"),
              "bash", "-c", srun[7]};
    auto o = local.run(c);
    REQUIRE(o);
    return *o;
  };
  std::ofstream(secrets) << "export HF_TOKEN='hf_x'\n";
  auto with = run_step();
  CHECK_MESSAGE(with.exit_code == 7, with.err); // the command's own status
  // rv added --master_port="$MASTER_PORT" (the stand-in drops it when it matches the port set);
  // OMP_NUM_THREADS is 16 CPUs / 2 local ranks.
  CHECK(with.out == fmt::format("{}|--nproc_per_node=2 train.py|8|{}|{}|hf_x|", workdir.string(),
                                (w.dir / "rv" / "checkpoints" / "proj-0123" / "train").string(), rid));
  std::filesystem::remove(secrets);
  auto without = run_step();
  CHECK(without.exit_code == 1);
  CHECK(without.out.empty()); // the command did not run
  CHECK(without.err.find("the secrets file is missing") != std::string::npos);
}

// #13: `rv --json up --run CMD` printed the record and left the allocation without running CMD.
TEST_CASE("rv --json up --run: runs the command, prints one document with its output, releases the allocation")
{
  World w("up-json");
  w.env.json = true;
  std::vector<std::string> srun;
  script_up(w, srun, "hello from the node\n");
  auto rc = launch_up(w.env, one_strategy(), "echo hello from the node");
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.done()); // srun ran, then scancel released the allocation
  CHECK(w.cluster.unexpected.empty());
  auto doc = nlohmann::json::parse(w.output.stdout_text);
  CHECK(doc["exit_code"] == 0);
  CHECK(doc["stdout"] == "hello from the node\n");
  CHECK(doc["request"]["command"] == "echo hello from the node");
  CHECK(doc["request"]["state"] == "done");
}

// Regression from 0905b7f (issue #24): `rv up` without --run won the race, refused the empty
// command ("the command is empty", exit 2), released the allocation and recorded the request done.
TEST_CASE("rv up shell: the PTY step opens a shell in the job's environment and directory, then releases")
{
  World w("up-pty");
  std::vector<std::string> srun;
  const auto workdir = up_in_project(w, srun, "");
  CHECK(w.cluster.done()); // the step ran, then scancel released the allocation
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.record()["state"] == "done");
  // srun --jobid=1301 --overlap --nodes=1 --ntasks=1 --pty bash -c PROGRAM
  REQUIRE(srun.size() == 9);
  CHECK(srun[5] == "--pty");
  CHECK(srun[6] == "bash");
  // PROGRAM for real: the interactive shell reads what the user types (here from stdin) in the
  // job's directory with the job's environment and secrets.
  const auto rid = w.record()["id"].get<std::string>();
  const auto secrets = w.dir / "rv" / "requests" / rid / "env";
  std::filesystem::create_directories(secrets.parent_path());
  std::ofstream(secrets) << "export HF_TOKEN='hf_x'\n";
  proc::LocalRunner local;
  proc::Command c;
  c.argv = {"env", "-u", "SLURM_JOB_ID", "HOME=" + w.dir.string(), "bash", "-c", srun[8]};
  c.stdin_data = "printf '%s|' \"$PWD\" \"$RV_REQUEST_ID\" \"$HF_TOKEN\" \"$OMP_NUM_THREADS\"; exit 3\n";
  auto o = local.run(c);
  REQUIRE(o);
  CHECK_MESSAGE(o->exit_code == 3, o->err); // the shell's own status: `exit 3` ended it
  CHECK(o->out == fmt::format("{}|{}|hf_x|16|", workdir.string(), rid));
}

// A shell step whose allocation cannot give a PTY is rv's failure, recorded failed, not done.
TEST_CASE("rv up shell: a step that cannot start is recorded failed and the allocation is released")
{
  World w("up-pty-fail");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1501");
  expect_win(w.cluster, "1501", squeue_row("1501", "RUNNING", "a100-1"), "1501");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  w.cluster.on([](const auto& a) { return a.front() == "srun"; }, Error{ErrorCode::usage, "no terminal", ""});
  w.cluster.on([](const auto& a) { return has(a, "scancel") && has(a, "1501"); }, Cluster::ok());
  auto rc = launch_up(w.env, one_strategy(), "");
  CHECK_FALSE(rc);
  CHECK(w.cluster.done());
  CHECK(w.record()["state"] == "failed");
}

// An interactive `rv up` shell starts in a snapshot only when rv runs inside a project: never the
// home directory or a loose folder sent whole, and never with --workdir / --no-sync.
TEST_CASE("rv up shell: nothing is sent from the home directory, outside a project, or with --workdir")
{
  World w("up-shell");
  namespace fs = std::filesystem;
  const auto home = w.dir / "home";
  const auto loose = w.dir / "loose";
  fs::create_directories(home);
  fs::create_directories(loose);
  std::ofstream(home / "requirements.txt") << "numpy\n"; // a project marker in the home itself
  w.env.home = home.string();
  SmartRunFlags flags;
  for (const auto& cwd : {home, loose}) {
    w.env.cwd = cwd;
    auto run = prepare_shell(w.env, flags);
    REQUIRE_MESSAGE(run, run.error().message);
    CHECK(run->workdir.empty());
    CHECK(run->extras.sync.is_null());
  }
  fs::create_directories(w.dir / "proj" / ".git");
  w.env.cwd = w.dir / "proj";
  flags.workdir = "/scratch/alice/exp";
  auto given = prepare_shell(w.env, flags);
  REQUIRE(given);
  CHECK(given->workdir == "/scratch/alice/exp");
  CHECK(w.cluster.seen.empty()); // not one command reached the cluster
  CHECK(w.local.seen.empty());
}

// #15 campaign (sshd_cut during `rv up --run`): the connection dropped, the release's scancel could
// not run, yet the record said `done` with the allocation CANCELLED: nothing ever released it.
TEST_CASE("rv up whose release cannot run keeps the allocation tracked for rv ps and rv stop")
{
  World w("up-release");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1401");
  expect_win(w.cluster, "1401", squeue_row("1401", "RUNNING", "a100-1"), "1401");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  const Error lost{ErrorCode::unreachable, "connection lost", ""};
  w.cluster.on([](const auto& a) { return a.front() == "srun"; }, lost);
  w.cluster.on([](const auto& a) { return has(a, "scancel"); }, lost);
  auto rc = launch_up(w.env, one_strategy(), "true");
  CHECK_FALSE(rc);
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "won"); // live: `rv ps` lists it, `rv stop` releases it
  CHECK(saved["jobs"][0]["state"] == "RUNNING");
  CHECK(saved["secrets_file"] != ""); // still needed by the allocation; rv stop deletes it
}
