// Re-fan-out decisions (app/run/launch/refanout.hpp): pure, from how the winner ended and its log's tail.

#include "app/run/launch/refanout.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;

namespace {

const std::string k_preflight_tail = "rv: job 212 claimed request 3f9c02ab\n"
                                     "rv preflight: FAIL node=a100-1 reason=nvidia-smi: No devices were found\n"
                                     "rv: preflight failed: the command does not run here; exit 96\n";
// The preflight's verdict file (templates::preflight_verdict_path): its FAIL line.
const std::string k_verdict = "rv preflight: FAIL node=a100-1 reason=nvidia-smi: No devices were found\n";

} // namespace

TEST_CASE("refanout: a preflight failure excludes the node it names and races again")
{
  auto d = decide_refanout({slurm::JobState::failed, 96, 3, "a100-1", k_preflight_tail, k_verdict}, {}, 0, 2);
  CHECK(d.retry);
  CHECK(d.exclude == std::vector<std::string>{"a100-1"});
  CHECK(d.step.kind == "preflight");
  CHECK(d.step.node == "a100-1");
  CHECK(d.step.reason == "nvidia-smi: No devices were found");
  CHECK(d.why_not.empty());
  // A multi-node job excludes only the node that failed, not its healthy partner.
  d = decide_refanout({slurm::JobState::failed, 96, 5, "a100-[1-2]",
                       "rv preflight: ok node=a100-1 gpus=8/8\nrv preflight: FAIL node=a100-2 reason=driver differs\n",
                       "rv preflight: FAIL node=a100-2 reason=driver differs\n"},
                      {}, 0, 2);
  CHECK(d.exclude == std::vector<std::string>{"a100-2"});
  // A verdict file without a readable reason line: the preflight failed, every node is suspect.
  d = decide_refanout({slurm::JobState::failed, 96, 5, "a100-[1-2]", "", "garbled\n"}, {}, 0, 2);
  CHECK(d.retry);
  CHECK(d.exclude == std::vector<std::string>{"a100-1", "a100-2"});
}

TEST_CASE("refanout: a container image that cannot be pulled fails the request at once: every node would fail it")
{
  auto d = decide_refanout({slurm::JobState::failed, 96, 4, "a100-1", "",
                            "rv preflight: FAIL node=a100-1 scope=request reason=apptainer pull docker://rv-test/"
                            "missing:1 failed: FATAL: manifest unknown\n"},
                           {}, 0, 2);
  CHECK_FALSE(d.retry);
  CHECK(d.exclude.empty());
  CHECK(d.step.kind == "preflight");
  CHECK(d.step.reason == "apptainer pull docker://rv-test/missing:1 failed: FATAL: manifest unknown");
  CHECK(d.why_not.find("every node would fail it") != std::string::npos);
  // A container that sees no GPU is the node's fault: raced again without it.
  d = decide_refanout({slurm::JobState::failed, 96, 4, "a100-1", "",
                       "rv preflight: FAIL node=a100-1 reason=the container sees no GPU (no nvidia-smi inside)\n"},
                      {}, 0, 2);
  CHECK(d.retry);
  CHECK(d.exclude == std::vector<std::string>{"a100-1"});
}

TEST_CASE("refanout: a command that exits 96 itself ran, and is never run again (N2)")
{
  // The preflight passed and the user's command exited 96: no verdict file, so no retry.
  auto d = decide_refanout({slurm::JobState::failed, 96, 600, "a100-1",
                            "rv preflight: ok node=a100-1 gpus=1/1\nrv: command exited with status 96\n", ""},
                           {}, 0, 2);
  CHECK_FALSE(d.retry);
  CHECK(d.step.kind.empty());
  CHECK(d.exclude.empty());
  // A command that prints the preflight's FAIL line itself and exits 96 is not a verdict either.
  d = decide_refanout({slurm::JobState::failed, 96, 5, "a100-[1-2]", k_preflight_tail, ""}, {}, 0, 2);
  CHECK_FALSE(d.retry);
  CHECK(d.step.kind.empty());
  d = decide_refanout({slurm::JobState::failed, 96, 5, "a100-[1-2]", "", " \n"}, {}, 0,
                      2); // an empty file is no verdict
  CHECK_FALSE(d.retry);
}

TEST_CASE("refanout: a GPU fault soon after the start is retried without the job's nodes, late or ordinary "
          "failures are not")
{
  const std::string tail = "RuntimeError: CUDA error: unknown error\n";
  auto d = decide_refanout({slurm::JobState::failed, 1, 40, "v100-1", tail, ""}, {}, 0, 2);
  CHECK(d.retry);
  CHECK(d.step.kind == "gpu_fault");
  CHECK(d.step.reason == "cuda error: unknown error");
  CHECK(d.exclude == std::vector<std::string>{"v100-1"});
  CHECK_FALSE(
      decide_refanout({slurm::JobState::failed, 1, 4000, "v100-1", tail, ""}, {}, 0, 2).retry); // ran for an hour
  CHECK(decide_refanout({slurm::JobState::failed, 1, 4000, "v100-1", tail, ""}, {}, 0, 2)
            .step.kind.empty()); // not a node failure
  CHECK_FALSE(decide_refanout({slurm::JobState::failed, 4, 10, "v100-1", "KeyError: 'lr'\n", ""}, {}, 0, 2).retry);
  CHECK_FALSE(decide_refanout({slurm::JobState::completed, 0, 10, "v100-1", tail, ""}, {}, 0, 2).retry);
  CHECK_FALSE(decide_refanout({slurm::JobState::timeout, 0, 10, "v100-1", k_preflight_tail, ""}, {}, 0, 2).retry);
}

TEST_CASE("refanout: at most N rounds, and never twice around the same node")
{
  auto d = decide_refanout({slurm::JobState::failed, 96, 3, "a100-1", k_preflight_tail, k_verdict}, {}, 2, 2);
  CHECK_FALSE(d.retry);
  CHECK(d.step.kind == "preflight"); // still reported as a node failure
  CHECK(d.why_not.find("limit is reached (2 rounds") != std::string::npos);
  CHECK_FALSE(decide_refanout({slurm::JobState::failed, 96, 3, "a100-1", k_preflight_tail, k_verdict}, {}, 0, 0)
                  .retry); // refanout_max 0
  d = decide_refanout({slurm::JobState::failed, 96, 3, "a100-1", k_preflight_tail, k_verdict}, {"a100-1"}, 1, 2);
  CHECK_FALSE(d.retry);
  CHECK(d.why_not.find("no node left to exclude") != std::string::npos);
}

TEST_CASE("refanout: the record's history and what rv ps shows of it")
{
  std::vector<RefanoutStep> history = {{"3f9c02ab", "212", "a100-1", "preflight", "nvidia-smi: No devices were found"}};
  auto j = refanout_json(history, {"a100-1"}, "77aa0011");
  CHECK(j["history"][0]["node"] == "a100-1");
  CHECK(j["excluded"] == nlohmann::json::array({"a100-1"}));
  CHECK(j["next_request"] == "77aa0011");
  auto lines = refanout_lines(j);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "a100-1 failed the preflight (nvidia-smi: No devices were found) in request 3f9c02ab, job 212");
  CHECK(lines[1] == "re-fanned out as request 77aa0011");
  CHECK(refanout_lines(nlohmann::json()).empty());
  CHECK(refanout_lines(nlohmann::json::array()).empty());
}

TEST_CASE("refanout: the history a record carries reads back step by step (a round across clusters goes on from it)")
{
  std::vector<RefanoutStep> steps{{"aaaa0001", "101", "v100-1", "preflight", "nvidia-smi: No devices were found"},
                                  {"bbbb0002", "7", "h100-1", "gpu_fault", "Xid 79"}};
  const auto back = refanout_history(refanout_json(steps, {"v100-1", "h100-1"}, ""));
  REQUIRE(back.size() == 2);
  CHECK(back[1].request_id == "bbbb0002");
  CHECK(back[1].job_id == "7");
  CHECK(back[0].node == "v100-1");
  CHECK(back[0].kind == "preflight");
  CHECK(back[1].reason == "Xid 79");
  CHECK(refanout_history(nlohmann::json()).empty());
  CHECK(refanout_history(nlohmann::json{{"history", "not a list"}}).empty());
}
