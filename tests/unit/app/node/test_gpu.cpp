// `rv gpu`: the one srun step it sends, its labelled output read back per node (interleaved,
// failing, silent nodes), the table and the JSON shape.

#include "app/node/gpu.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace rv;
using namespace rv::app;

namespace {

// What `srun --label` prints for two nodes, their lines interleaved as srun forwards them.
const std::string k_two_nodes = "0: @rv-node a100-1\n"
                                "1: @rv-node a100-2\n"
                                "0: @rv-gpus 0\n"
                                "1: @rv-gpus 6\n"
                                "0: 0, NVIDIA A100-SXM4-80GB, GPU-aaa, 00000000:07:00.0, 37, 1234, 81920, 55\n"
                                "1: No devices were found\n"
                                "0: 1, NVIDIA A100-SXM4-80GB, GPU-bbb, 00000000:17:00.0, [N/A], 0, 81920, 31\n"
                                "1: @rv-apps 6\n"
                                "0: @rv-apps 0\n"
                                "1: No devices were found\n"
                                "0: GPU-aaa, 00000000:07:00.0, 4242, /usr/bin/python3, 1200\n";

} // namespace

TEST_CASE("gpu: one srun step over every node (or the one of --node), nvidia-smi without CUDA_VISIBLE_DEVICES")
{
  auto c = gpu_command("241", {"a100-1", "a100-2"}, true);
  REQUIRE(c.argv.size() == 11);
  CHECK(c.argv[0] == "srun");
  CHECK(std::find(c.argv.begin(), c.argv.end(), "--overlap") != c.argv.end());
  CHECK(std::find(c.argv.begin(), c.argv.end(), "--jobid=241") != c.argv.end());
  CHECK(std::find(c.argv.begin(), c.argv.end(), "--nodes=2") != c.argv.end());
  CHECK(std::find(c.argv.begin(), c.argv.end(), "--ntasks-per-node=1") != c.argv.end());
  CHECK(std::find(c.argv.begin(), c.argv.end(), "--label") != c.argv.end());
  CHECK(c.argv.back().find("env -u CUDA_VISIBLE_DEVICES nvidia-smi --query-gpu=index,name,uuid") != std::string::npos);
  CHECK(c.argv.back().find("--query-compute-apps=gpu_uuid,gpu_bus_id,pid,process_name,used_gpu_memory") !=
        std::string::npos);
  auto one = gpu_command("241", {"a100-2"}, false);
  CHECK(std::find(one.argv.begin(), one.argv.end(), "--nodelist=a100-2") != one.argv.end());
  CHECK(std::find(one.argv.begin(), one.argv.end(), "--nodes=1") != one.argv.end());
}

TEST_CASE("gpu: the tasks' interleaved lines are read back per node, a failing or silent node says why")
{
  auto nodes = parse_gpu_output(k_two_nodes, {"a100-1", "a100-2"});
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].node == "a100-1");
  CHECK(nodes[0].error.empty());
  REQUIRE(nodes[0].gpus.size() == 2);
  CHECK(nodes[0].gpus[0].util_pct == 37);
  CHECK(nodes[0].gpus[0].mem_used_mib == 1234);
  CHECK(nodes[0].gpus[0].temp_c == 55);
  CHECK_FALSE(nodes[0].gpus[1].util_pct);
  REQUIRE(nodes[0].processes.size() == 1);
  CHECK(nodes[0].processes[0].pid == 4242);
  CHECK(nodes[1].error == "nvidia-smi exited 6: No devices were found");
  CHECK(nodes[1].gpus.empty());

  auto silent = parse_gpu_output("0: @rv-node a100-1\n0: @rv-gpus 127\n0: env: 'nvidia-smi': No such file\n",
                                 {"a100-1", "a100-2"});
  CHECK(silent[0].error == "nvidia-smi is not installed on this node");
  CHECK(silent[1].error.find("no answer from this node") == 0);
  CHECK(parse_gpu_output("10: @rv-node n10\n10: @rv-gpus 124\n", {"n10"})[0].error.find("did not answer") !=
        std::string::npos);
  CHECK(parse_gpu_output("garbage\n: x\n99999999: y\n", {"n"})[0].error.find("no answer") == 0);
}

TEST_CASE("gpu: the table and the JSON document")
{
  GpuReport r;
  r.request_id = "3f9c02ab";
  r.job_id = "241";
  r.time = 1764070000;
  r.nodes = parse_gpu_output(k_two_nodes, {"a100-1", "a100-2"});
  Activity a;
  a.idle_s = 2520;
  a.nodes = 2;
  a.sampled_at = 1764069990;
  r.activity = a;
  const auto table = gpu_table(r);
  CHECK(table.starts_with("request 3f9c02ab  job 241  idle 42m\n"));
  CHECK(table.find("a100-1         0  NVIDIA A100-SXM4-80GB      37%       1234/81920 MiB    55C  4242 python3 "
                   "(1200 MiB)\n") != std::string::npos);
  CHECK(table.find("a100-1         1  NVIDIA A100-SXM4-80GB      n/a          0/81920 MiB    31C  -\n") !=
        std::string::npos);
  CHECK(table.find("a100-2         -  nvidia-smi exited 6: No devices were found\n") != std::string::npos);

  auto j = to_json(r);
  CHECK(j["request"] == "3f9c02ab");
  CHECK(j["job_id"] == "241");
  CHECK(j["watchdog"]["idle_s"] == 2520);
  CHECK(j["nodes"][0]["error"].is_null());
  CHECK(j["nodes"][0]["gpus"][0]["util_pct"] == 37);
  CHECK(j["nodes"][0]["gpus"][1]["util_pct"].is_null());
  CHECK(j["nodes"][0]["processes"][0]["gpu_index"] == 0);
  CHECK(j["nodes"][1]["error"] == "nvidia-smi exited 6: No devices were found");
  CHECK(j["nodes"][1]["gpus"].empty());
  r.activity.reset();
  CHECK(to_json(r)["watchdog"].is_null());
}
