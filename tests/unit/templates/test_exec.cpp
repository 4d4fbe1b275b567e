// Runs rendered scripts for real (bash, fake Slurm commands): quoting, exit status, the guard,
// multi-node ranks and the checkpoint protocol.

#include "exec_fixture.hpp"

#include "core/process/shell.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <regex>
#include <string>

using namespace rv::templates;
using namespace rv::templates::testing;
namespace model = rv::model;

TEST_CASE("exec: the command runs exactly as typed at a shell, once, and its status is the job's")
{
  ExecFixture fx;
  auto opts = fx.options("");
  opts.command = k_nasty_command;
  auto script = fx.write_script("job", render_ok(base_strategy(), base_request(), opts));
  // What bash prints for the same command line typed at a shell (same HOME, same RV_JOB_NAME).
  rv::testing::write_text(fx.path("cmd.txt"), k_nasty_command);
  int expected_rc = ExecFixture::sh("env -i HOME=/home/alice RV_JOB_NAME=train PATH=/usr/bin:/bin bash -c \"$(cat '" +
                                    fx.path("cmd.txt") + "')\" >'" + fx.path("expected.txt") + "' 2>/dev/null");
  CHECK(expected_rc == 7);
  int rc = ExecFixture::sh(fx.job_env("101") + "bash '" + script + "' >'" + fx.path("stdout.txt") + "' 2>'" +
                           fx.path("stderr.txt") + "'");
  CHECK(rc == 7);
  auto out = fx.read("stdout.txt");
  CHECK(out == fx.read("expected.txt"));
  CHECK(out == "<it's>\n<$HOME>\n<train>\n<a  b>\n<back`tick`>\n<ünïcödé ✓>\n<*>\n<sub>\n<semi;colon>\n"
               "<pipe|amp&>\n<dq\"inside>\nsecond line 3\n");
  CHECK(fx.read("stderr.txt").find("rv: command exited with status 7") != std::string::npos);
}

TEST_CASE("exec: the environment the job sees")
{
  ExecFixture fx;
  auto opts = fx.options("");
  opts.command = "echo \"omp=$OMP_NUM_THREADS port=$MASTER_PORT end=$RV_JOB_END_TIME ckpt=$RV_CHECKPOINT_DIR "
                 "out=$RV_OUTPUT_DIR hf=$HF_HOME py=$PYTHONUNBUFFERED tok=$TOKENIZERS_PARALLELISM pwd=$PWD "
                 "x=$MY_VAR\"";
  opts.env = {{"MY_VAR", "a $b"}};
  auto script = fx.write_script("job", render_ok(base_strategy(), base_request(), opts));
  int rc = ExecFixture::sh(fx.job_env("20123", "FAKE_END_TIME=2026-11-22T06:00:00") + "bash '" + script + "' >'" +
                           fx.path("stdout.txt") + "' 2>/dev/null");
  CHECK(rc == 0);
  auto out = fx.read("stdout.txt");
  CHECK(out.find("omp=16 ") != std::string::npos);
  CHECK(out.find("port=20123 ") != std::string::npos); // 20000 + 20123 % 20000
  CHECK(out.find("end=1795327200 ") != std::string::npos);
  CHECK(out.find("ckpt=" + fx.path("ckpt") + "/myproj-1a2b3c/train ") != std::string::npos);
  CHECK(out.find("out=" + fx.path("out") + "/train-20123 ") != std::string::npos);
  CHECK(out.find("hf=" + fx.path("cache") + "/huggingface ") != std::string::npos);
  CHECK(out.find("py=1 tok=false pwd=" + fx.dir.string() + " x=a $b\n") != std::string::npos);
}

TEST_CASE("exec: secrets come from their file, which the script names but never contains")
{
  ExecFixture fx;
  auto opts = fx.options("");
  const std::string secret = "s3cr3t 'q' \"dq\" $HOME `x`";
  rv::testing::write_text(fx.path("env"), "export HF_TOKEN='s3cr3t '\\''q'\\'' \"dq\" $HOME `x`'\n");
  opts.secrets_file = fx.path("env");
  opts.consume_secrets = true;
  opts.command = "printf '%s' \"$HF_TOKEN\"";
  const auto text = render_ok(base_strategy(), base_request(), opts);
  CHECK(text.find("s3cr3t") == std::string::npos);
  auto script = fx.write_script("job", text);
  CHECK(ExecFixture::sh(fx.job_env("1") + "bash '" + script + "' >'" + fx.path("out.txt") + "' 2>/dev/null") == 0);
  CHECK(fx.read("out.txt") == secret);
  CHECK_FALSE(std::filesystem::exists(fx.path("env"))); // consumed: read once, then deleted

  // The file is gone (a requeued plain job): a clear error, not a run without the secrets.
  CHECK(ExecFixture::sh(fx.job_env("1") + "bash '" + script + "' >/dev/null 2>'" + fx.path("err.txt") + "'") != 0);
  CHECK(fx.read("err.txt").find("the secrets file is missing") != std::string::npos);

  // Checkpoint segments read it again later: they keep it.
  auto ckpt = base_strategy();
  ckpt.kind = model::StrategyKind::checkpoint;
  ckpt.walltime_s = 4 * 3600;
  ckpt.total_time_s = 12 * 3600;
  auto ckpt_request = base_request();
  ckpt_request.time_s = 12 * 3600;
  CHECK(render_ok(ckpt, ckpt_request, opts).find("rm -f -- " + rv::proc::shell_quote(fx.path("env"))) ==
        std::string::npos);
  CHECK(text.find("rm -f -- " + rv::proc::shell_quote(fx.path("env"))) != std::string::npos);
}

TEST_CASE("exec: two siblings starting together run the command once")
{
  ExecFixture fx;
  auto opts = fx.options("req-race");
  opts.command = "echo \"ran in $SLURM_JOB_ID\" >>'" + fx.path("ran.txt") + "'; sleep 1";
  auto script = fx.write_script("job", render_ok(base_strategy(), base_request(), opts));
  rv::testing::write_text(fx.path("squeue.txt"), "201 rv:req-race\n202 rv:req-race\n300 rv:other\n");
  auto run = [&](const std::string& id) {
    return fx.job_env(id, "FAKE_SQUEUE_FILE='" + fx.path("squeue.txt") + "'") + "bash '" + script + "' >'" +
           fx.path(id + ".out") + "' 2>'" + fx.path(id + ".err") + "'; echo $? >'" + fx.path(id + ".rc") + "'";
  };
  CHECK(ExecFixture::sh("(" + run("201") + ") & (" + run("202") + ") & wait") == 0);
  auto ran = fx.read("ran.txt");
  CHECK(count(ran, "ran in") == 1);
  CHECK(fx.read("201.rc") == "0\n");
  CHECK(fx.read("202.rc") == "0\n");
  const std::string winner = ran.find("201") != std::string::npos ? "201" : "202";
  const std::string loser = winner == "201" ? "202" : "201";
  auto calls = fx.read("calls.log");
  CHECK(count(calls, "scancel " + loser + "\n") >= 1); // the winner cancels it, and it cancels itself
  CHECK(calls.find("scancel " + winner + "\n") == std::string::npos);
  CHECK(calls.find("scancel 300") == std::string::npos);
  CHECK(fx.read(loser + ".err").find("already claimed by job " + winner) != std::string::npos);
  CHECK(fx.read("rv/requests/req-race/claim/owner") == winner + "\n");

  // A requeued winner (same job id) and a resubmitted segment (RV_CLAIM_OWNER) proceed.
  CHECK(ExecFixture::sh(fx.job_env(winner) + "bash '" + script + "' >/dev/null 2>&1") == 0);
  CHECK(ExecFixture::sh(fx.job_env("777", "RV_CLAIM_OWNER=" + winner) + "bash '" + script + "' >/dev/null 2>&1") == 0);
  CHECK(ExecFixture::sh(fx.job_env("778") + "bash '" + script + "' >/dev/null 2>&1") == 0);
  ran = fx.read("ran.txt");
  CHECK(count(ran, "ran in") == 3);
  CHECK(ran.find("ran in 777") != std::string::npos);
  CHECK(ran.find("ran in 778") == std::string::npos);
}

TEST_CASE("exec: a tie goes to the better-ranked sibling, even when it starts a moment later")
{
  ExecFixture fx;
  auto opts = fx.options("req-tie");
  opts.command = "echo \"ran in $SLURM_JOB_ID\" >>'" + fx.path("ran.txt") + "'";
  // Ranks 2 and 3 of 3: both settle (rank 1 alone claims at once, the next case).
  opts.strategy_count = 3;
  opts.strategy_rank = 2;
  auto best = fx.write_script("best", render_ok(base_strategy(), base_request(), opts));
  opts.strategy_rank = 3;
  auto second = fx.write_script("second", render_ok(base_strategy(), base_request(), opts));
  rv::testing::write_text(fx.path("squeue.txt"), "401 rv:req-tie\n402 rv:req-tie\n");
  auto run = [&](const std::string& id, const std::string& script) {
    return fx.job_env(id, "RV_TIE_SETTLE_S=1 FAKE_SQUEUE_FILE='" + fx.path("squeue.txt") + "'") + "bash '" + script +
           "' >'" + fx.path(id + ".out") + "' 2>'" + fx.path(id + ".err") + "'";
  };
  // The worse-ranked one starts first; the better one 0.3 s later, within the settle time.
  CHECK(ExecFixture::sh("(" + run("402", second) + ") & sleep 0.3; (" + run("401", best) + ") & wait") == 0);
  CHECK(fx.read("ran.txt") == "ran in 401\n");
  CHECK(fx.read("402.err").find("yields") != std::string::npos);
  CHECK(fx.read("rv/requests/req-tie/claim/owner") == "401\n");
  CHECK(fx.read("calls.log").find("scancel 402\n") != std::string::npos);

  // Alone (no better sibling started), the second-ranked one claims after the settle time.
  ExecFixture fx2;
  auto opts2 = fx2.options("req-alone");
  opts2.command = "echo alone";
  opts2.strategy_count = 3;
  opts2.strategy_rank = 3;
  auto script = fx2.write_script("job", render_ok(base_strategy(), base_request(), opts2));
  CHECK(ExecFixture::sh(fx2.job_env("500", "RV_TIE_SETTLE_S=0") + "bash '" + script + "' >'" + fx2.path("out.txt") +
                        "' 2>/dev/null") == 0);
  CHECK(fx2.read("out.txt") == "alone\n");
}

TEST_CASE("exec: the best-ranked sibling claims at once, a worse one still settling then cancels itself")
{
  ExecFixture fx;
  auto opts = fx.options("req-first");
  opts.command = "echo \"ran in $SLURM_JOB_ID\" >>'" + fx.path("ran.txt") + "'";
  opts.strategy_count = 2;
  opts.strategy_rank = 1;
  auto best = fx.write_script("best", render_ok(base_strategy(), base_request(), opts));
  opts.strategy_rank = 2;
  auto second = fx.write_script("second", render_ok(base_strategy(), base_request(), opts));
  rv::testing::write_text(fx.path("squeue.txt"), "401 rv:req-first\n402 rv:req-first\n");
  auto run = [&](const std::string& id, const std::string& script, int settle_s) {
    return fx.job_env(id, fmt::format("RV_TIE_SETTLE_S={} FAKE_SQUEUE_FILE='{}'", settle_s, fx.path("squeue.txt"))) +
           "bash '" + script + "' >'" + fx.path(id + ".out") + "' 2>'" + fx.path(id + ".err") + "'";
  };
  // Rank 2 starts first and settles 2 s; rank 1 starts 0.3 s later with a settle time of 30 s,
  // which it must not wait: nothing ranks better than it.
  const auto start = std::chrono::steady_clock::now();
  CHECK(ExecFixture::sh("(" + run("402", second, 2) + ") & sleep 0.3; (" + run("401", best, 30) + ") & wait") == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK(fx.read("ran.txt") == "ran in 401\n");
  CHECK(fx.read("rv/requests/req-first/claim/owner") == "401\n");
  CHECK(fx.read("402.err").find("already claimed by job 401") != std::string::npos);
  CHECK(fx.read("calls.log").find("scancel 402\n") != std::string::npos);
}

TEST_CASE("exec: multi-node tasks get their node rank and one master")
{
  ExecFixture fx;
  auto opts = fx.options("");
  opts.command = "echo \"rank=$NODE_RANK world=$WORLD_SIZE addr=$MASTER_ADDR port=$MASTER_PORT\"; "
                 "[ \"$NODE_RANK\" = 1 ] && exit 5; exit 0";
  auto s = base_strategy();
  s.nodes = 2;
  auto script = fx.write_script("job", render_ok(s, base_request(), opts));
  int rc = ExecFixture::sh(fx.job_env("4242", "SLURM_NNODES=2") + "bash '" + script + "' >'" + fx.path("stdout.txt") +
                           "' 2>/dev/null");
  CHECK(rc == 5);
  auto out = fx.read("stdout.txt");
  CAPTURE(out);
  // 20000 + 4242 % 20000, or the next free one when something on this machine (another test
  // process) listens there: the same on both ranks either way.
  std::smatch m0, m1;
  const std::regex rank0("rank=0 world=2 addr=node-1 port=([0-9]+)\n"),
      rank1("rank=1 world=2 addr=node-1 port=([0-9]+)\n");
  REQUIRE(std::regex_search(out, m0, rank0));
  REQUIRE(std::regex_search(out, m1, rank1));
  CHECK(m0[1].str() == m1[1].str());
  CHECK(std::stoi(m0[1].str()) >= 24242);
  CHECK(std::stoi(m0[1].str()) < 24342);
  CHECK(fx.read("calls.log").find("--output=" + fx.path("logs") + "/train-%j.node%t.out") != std::string::npos);
}

namespace {

// A checkpoint strategy: 1 h segments of a 3 h total.
model::Strategy checkpoint_strategy()
{
  auto s = base_strategy();
  s.kind = model::StrategyKind::checkpoint;
  s.walltime_s = 3600;
  s.total_time_s = 3 * 3600;
  return s;
}

// A command that checkpoints on SIGUSR1 (or USR2) and exits 0, like a well-behaved trainer.
// It keeps running for 1 s after the signal, so a second signal would print a second line.
const std::string k_checkpointing_command =
    "trap 'echo \"checkpoint at segment $RV_SEGMENT\"; stop=1' USR1 USR2; stop=; "
    "while [ -z \"$stop\" ]; do sleep 0.2; done; sleep 1";

} // namespace

TEST_CASE("exec: checkpoint: a signalled segment records its time and requeues")
{
  ExecFixture fx;
  auto opts = fx.options("req-ck");
  opts.command = k_checkpointing_command;
  auto script = fx.write_script("job", render_ok(checkpoint_strategy(), base_request(), opts));
  // Slurm's --signal=B:USR1 reaches the batch shell; the script must forward it to the command.
  int rc = ExecFixture::sh(fx.job_env("500") + "bash '" + script + "' >'" + fx.path("stdout.txt") + "' 2>'" +
                           fx.path("stderr.txt") + "' & pid=$!; sleep 2; kill -USR1 $pid; wait $pid");
  CHECK(rc == 0);
  CHECK(fx.read("stdout.txt") == "checkpoint at segment 1\n");
  CHECK(fx.read("calls.log").find("scontrol requeue 500\n") != std::string::npos);
  auto elapsed = std::stoi(fx.read("ckpt/myproj-1a2b3c/train/.rv/req-ck/elapsed_s"));
  CHECK(elapsed >= 1);
  CHECK(elapsed <= 10); // ~2 s; a loaded CI machine starts bash late, so the bound is loose
  CHECK(fx.read("ckpt/myproj-1a2b3c/train/.rv/req-ck/segments") == "1\n");
  CHECK(fx.read("stderr.txt").find("requeueing job 500") != std::string::npos);
}

TEST_CASE("exec: checkpoint: without requeue the script resubmits itself, as the same owner")
{
  ExecFixture fx;
  auto opts = fx.options("req-ck2");
  opts.command = k_checkpointing_command;
  opts.use_requeue = false;
  opts.signal = "USR2";
  auto script = fx.write_script("job", render_ok(checkpoint_strategy(), base_request(), opts));
  int rc = ExecFixture::sh(fx.job_env("600") + "bash '" + script + "' >/dev/null 2>'" + fx.path("stderr.txt") +
                           "' & pid=$!; sleep 2; kill -USR2 $pid; wait $pid");
  CHECK(rc == 0);
  auto calls = fx.read("calls.log");
  CHECK(calls.find("requeue") == std::string::npos);
  CHECK(calls.find("sbatch --parsable --export=ALL,RV_CLAIM_OWNER=600 " + script + "\n") != std::string::npos);
  // The next segment's job id, for `rv run -f` (the fake sbatch answers with a job id).
  auto next = fx.read("rv/requests/req-ck2/next.600");
  CHECK(!next.empty());
  CHECK(next.find_first_not_of("0123456789\n") == std::string::npos);
}

TEST_CASE("exec: checkpoint: a crash is not continued, and its status is the job's")
{
  ExecFixture fx;
  auto opts = fx.options("req-crash");
  opts.command = "echo boom >&2; exit 3";
  auto script = fx.write_script("job", render_ok(checkpoint_strategy(), base_request(), opts));
  int rc = ExecFixture::sh(fx.job_env("700") + "bash '" + script + "' >/dev/null 2>'" + fx.path("stderr.txt") + "'");
  CHECK(rc == 3);
  auto calls = fx.read("calls.log");
  CHECK(calls.find("requeue") == std::string::npos);
  CHECK(calls.find("sbatch") == std::string::npos);
  CHECK(fx.read("stderr.txt").find("not continuing") != std::string::npos);
}

TEST_CASE("exec: checkpoint: the last segment is signalled when the requested total is used up")
{
  ExecFixture fx;
  auto opts = fx.options("req-total");
  opts.command = "trap 'echo stopped; exit 0' USR1; cd / && { sleep 20 & wait; }; echo never";
  auto script = fx.write_script("job", render_ok(checkpoint_strategy(), base_request(), opts));
  std::filesystem::create_directories(fx.path("ckpt/myproj-1a2b3c/train/.rv/req-total"));
  rv::testing::write_text(fx.path("ckpt/myproj-1a2b3c/train/.rv/req-total/elapsed_s"), "10798\n"); // 2 s left
  int rc = ExecFixture::sh(fx.job_env("800") + "bash '" + script + "' >'" + fx.path("stdout.txt") + "' 2>'" +
                           fx.path("stderr.txt") + "'");
  CHECK(rc == 0);
  CHECK(fx.read("stdout.txt") == "stopped\n");
  CHECK(fx.read("stderr.txt").find("requested total of 10800s reached") != std::string::npos);
  CHECK(fx.read("calls.log").find("requeue") == std::string::npos);

  // Once the total is reached a further segment does nothing.
  rc = ExecFixture::sh(fx.job_env("800") + "bash '" + script + "' >'" + fx.path("stdout2.txt") + "' 2>/dev/null");
  CHECK(rc == 0);
  CHECK(fx.read("stdout2.txt").empty());
}

TEST_CASE("exec: checkpoint multi-node: the signal reaches every node's command")
{
  ExecFixture fx;
  auto opts = fx.options("req-mn");
  // Counts deliveries: Slurm signals every process of the step; rv must not add a second signal.
  opts.command = "trap 'echo \"node $NODE_RANK saved\"; stop=1' USR1; stop=; "
                 "while [ -z \"$stop\" ]; do sleep 0.2; done; sleep 1";
  auto s = checkpoint_strategy();
  s.nodes = 2;
  auto script = fx.write_script("job", render_ok(s, base_request(), opts));
  int rc = ExecFixture::sh(fx.job_env("900", "SLURM_NNODES=2") + "bash '" + script + "' >'" + fx.path("stdout.txt") +
                           "' 2>'" + fx.path("stderr.txt") + "' & pid=$!; sleep 2; kill -USR1 $pid; wait $pid");
  CHECK(rc == 0);
  auto out = fx.read("stdout.txt");
  CHECK(count(out, "node 0 saved") == 1);
  CHECK(count(out, "node 1 saved") == 1);
  CHECK(fx.read("calls.log").find("scontrol requeue 900") != std::string::npos);
}

TEST_CASE("exec: --output paths are copied to RV_OUTPUT_DIR after the command, set-up runs before it")
{
  ExecFixture fx;
  auto opts = fx.options("");
  opts.command =
      "mkdir -p results/run1 && echo r >results/run1/a.txt && echo m >model.pt && echo \"venv=$RV_TEST_SETUP\"; exit 3";
  opts.outputs = {"results/run1", "model.pt", "missing.txt"};
  opts.setup = "export RV_TEST_SETUP=done\n";
  auto script = fx.write_script("job", render_ok(base_strategy(), base_request(), opts));
  int rc = ExecFixture::sh(fx.job_env("777") + "bash '" + script + "' >'" + fx.path("stdout.txt") + "' 2>'" +
                           fx.path("stderr.txt") + "'");
  CHECK(rc == 3); // the copy keeps the command's status
  CHECK(fx.read("stdout.txt") == "venv=done\n");
  CHECK(fx.read("out/train-777/results/run1/a.txt") == "r\n");
  CHECK(fx.read("out/train-777/model.pt") == "m\n");
  auto err = fx.read("stderr.txt");
  CHECK(err.find("warning: --output missing.txt does not exist") != std::string::npos);
  CHECK(err.find("copied model.pt to") != std::string::npos);
}

TEST_CASE("exec: --output paths must stay inside the job's directory")
{
  ExecFixture fx;
  auto opts = fx.options("");
  for (const char* bad : {"/etc/passwd", "../up", "a/../../b", "..", ""}) {
    opts.outputs = {bad};
    auto r = render(base_strategy(), base_request(), opts);
    CAPTURE(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("--output") != std::string::npos);
  }
  CHECK(check_output_path("results/run1"));
  CHECK(check_output_path("a..b"));
}

// #15 defect 4: with `deps_install: job` the dependency file's project-relative path reaches the
// script. The real set-up line (sync::deps_job_setup), rendered into a real job: a folder named
// `it"s` or a crafted name is text in the error message, never script.
TEST_CASE("exec: deps set-up: hostile dependency paths are text, the install's failure ends the job")
{
  for (const std::string& dir : {std::string("it\"s"), std::string("a\" ; } ; touch PWNED ; : || { \""),
                                 std::string("$(touch PWNED)`touch PWNED`'q'")}) {
    CAPTURE(dir);
    ExecFixture fx;
    auto opts = fx.options("");
    opts.command = "touch ran";
    opts.venv = fx.path("venv");
    const rv::sync::DepsFile deps{dir + "/requirements.txt", "requirements", "0123abcd"};
    // The file's folder does not exist on the "node": the install fails fast (cd) without pip.
    opts.setup = rv::sync::deps_job_setup(opts.venv, deps, fx.path(deps.rel_path));
    auto script = fx.write_script("job", render_ok(base_strategy(), base_request(), opts));
    CHECK(ExecFixture::sh("bash -n '" + script + "'") == 0);
    int rc = ExecFixture::sh("cd '" + fx.dir.string() + "' && " + fx.job_env("901") + "bash '" + script + "' >'" +
                             fx.path("stdout.txt") + "' 2>'" + fx.path("stderr.txt") + "'");
    CHECK(rc == 1);
    CHECK(fx.read("stderr.txt").find("error: installing " + deps.rel_path + " failed") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(fx.path("PWNED")));
    CHECK_FALSE(std::filesystem::exists(fx.path("ran"))); // no user code after a failed install
  }
}
