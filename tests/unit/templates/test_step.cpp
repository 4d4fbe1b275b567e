// templates::render_step (rv run --in): each task of the step runs the job's environment, its
// place on every node, then the command byte for byte, its output streamed and kept in the log.

#include "exec_fixture.hpp"

#include <doctest/doctest.h>

#include <regex>
#include <string>

using namespace rv::templates;
using namespace rv::templates::testing;
namespace model = rv::model;

namespace {

std::string render_step_ok(const model::Strategy& s, const RenderOptions& o, const StepProgram& step)
{
  auto program = render_step(s, base_request(), o, step);
  REQUIRE_MESSAGE(program.has_value(), program.error().message);
  return *program;
}

} // namespace

TEST_CASE("step: the command runs exactly as typed, its output streamed and kept apart, its status the step's")
{
  ExecFixture fx;
  auto opts = fx.options("req-1");
  opts.command = "echo to-err >&2; " + k_nasty_command;
  const auto base = fx.path("logs") + "/train-101.step-3";
  auto script = fx.write_script("step", render_step_ok(base_strategy(), opts, {false, base}));
  const int rc = ExecFixture::sh(fx.job_env("101") + "bash '" + script + "' >'" + fx.path("stdout.txt") + "' 2>'" +
                                 fx.path("stderr.txt") + "'");
  CHECK(rc == 7);
  const std::string expected = "<it's>\n<$HOME>\n<train>\n<a  b>\n<back`tick`>\n<ünïcödé ✓>\n<*>\n<sub>\n"
                               "<semi;colon>\n<pipe|amp&>\n<dq\"inside>\nsecond line 3\n";
  CHECK(fx.read("stdout.txt") == expected);
  CHECK(fx.read("stderr.txt").find("to-err\n") != std::string::npos);
  CHECK(fx.read("stdout.txt").find("to-err") == std::string::npos);
  // Kept: the same bytes in the step's log, stdout and stderr apart; the status beside them.
  CHECK(rv::testing::read_text(base + ".out") == expected);
  CHECK(rv::testing::read_text(base + ".err") == "to-err\n");
  CHECK(rv::testing::read_text(base + ".status") == "7\n");
}

TEST_CASE("step: the job's environment: caches, request id, --env, the snapshot directory")
{
  ExecFixture fx;
  auto opts = fx.options("req-9");
  opts.command = "echo \"hf=$HF_HOME rid=$RV_REQUEST_ID x=$MY_VAR pwd=$PWD rank=${NODE_RANK-unset}\"";
  opts.env = {{"MY_VAR", "a $b"}};
  const auto base = fx.path("logs") + "/train-5.step-1";
  auto script = fx.write_script("step", render_step_ok(base_strategy(), opts, {false, base}));
  CHECK(ExecFixture::sh(fx.job_env("5") + "bash '" + script + "' >'" + fx.path("out.txt") + "' 2>/dev/null") == 0);
  CHECK(fx.read("out.txt") ==
        "hf=" + fx.path("cache") + "/huggingface rid=req-9 x=a $b pwd=" + fx.dir.string() + " rank=unset\n");
}

TEST_CASE("step: on every node, each task gets its rank, one master and one port, logs per node")
{
  ExecFixture fx;
  auto opts = fx.options("req-1");
  opts.command = "echo \"rank=$NODE_RANK world=$WORLD_SIZE addr=$MASTER_ADDR port=$MASTER_PORT\"; "
                 "[ \"$NODE_RANK\" = 1 ] && exit 5; exit 0";
  auto s = base_strategy();
  s.nodes = 2;
  const auto base = fx.path("logs") + "/train-4242.step-2";
  auto script = fx.write_script("step", render_step_ok(s, opts, {true, base}));
  // What srun does: the same program once per node, SLURM_NODEID telling them apart.
  for (const char* node : {"0", "1"}) {
    const int rc = ExecFixture::sh(
        fx.job_env("4242", std::string("SLURM_NODEID=") + node + " SLURM_STEP_ID=3 SLURM_STEP_NUM_NODES=2") + "bash '" +
        script + "' >>'" + fx.path("out.txt") + "' 2>/dev/null");
    CHECK(rc == (std::string(node) == "1" ? 5 : 0));
  }
  // 20000 + (4242 + 997 * 3) % 20000 on both: no node asks another.
  CHECK(fx.read("out.txt") == "rank=0 world=2 addr=node-1 port=27233\nrank=1 world=2 addr=node-1 port=27233\n");
  CHECK(rv::testing::read_text(base + ".node0.out") == "rank=0 world=2 addr=node-1 port=27233\n");
  CHECK(rv::testing::read_text(base + ".node1.status") == "5\n");
}

TEST_CASE("step: a multi-node launcher gets its multi-node flags only on every node")
{
  auto opts = base_options();
  opts.command = "torchrun train.py";
  auto s = base_strategy();
  s.nodes = 2;
  const auto every = render_step_ok(s, opts, {true, "/l/x"});
  const auto one = render_step_ok(s, opts, {false, "/l/x"});
  CHECK(every.find("--nnodes") != std::string::npos);
  CHECK(one.find("--nnodes") == std::string::npos);
  CHECK(every.find("NCCL_DEBUG") != std::string::npos);
  // No race guard, no preflight, no sbatch lines: the allocation has passed them.
  CHECK(every.find("#SBATCH") == std::string::npos);
  CHECK(every.find("_rv_guard") == std::string::npos);
}

TEST_CASE("step: refused inputs: no log path, a relative one, an empty command")
{
  auto opts = base_options();
  CHECK_FALSE(render_step(base_strategy(), base_request(), opts, {false, ""}).has_value());
  CHECK_FALSE(render_step(base_strategy(), base_request(), opts, {false, "logs/x"}).has_value());
  CHECK_FALSE(render_step(base_strategy(), base_request(), opts, {false, "/l/x\ny"}).has_value());
  opts.command.clear();
  CHECK_FALSE(render_step(base_strategy(), base_request(), opts, {false, "/l/x"}).has_value());
}
