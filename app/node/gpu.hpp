#pragma once
// `rv gpu [REQUEST]` (docs/gpu.md): nvidia-smi on every node of a request's running job, in one
// round trip (one `srun --overlap` step with a task per node, plus the watchdog's samples),
// shown as one table or as JSON; `--watch` repeats it.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/request/watchdog_samples.hpp"
#include "slurm/nvidia_smi.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

// The running job `rv gpu` looks at.
struct GpuTarget {
  RequestRecord request;
  std::string job_id;
  std::vector<std::string> nodes; // every node of the allocation, in Slurm's order
};

// The request `key` names (id prefix, job id or job name; "" = the newest whose winner runs),
// refreshed from Slurm. A pending or ended request, or none running, is a usage error saying
// which, with what to do.
Result<GpuTarget> gpu_target(Env& env, const std::string& key);

// What one node's nvidia-smi said: its GPUs and their processes, or why there is nothing.
struct NodeGpus {
  std::string node;
  std::vector<slurm::GpuReading> gpus;
  std::vector<slurm::GpuProcess> processes;
  std::string error; // "" when nvidia-smi answered
};

struct GpuReport {
  std::string request_id;
  std::string job_id;
  std::int64_t time = 0; // epoch seconds of the query
  std::vector<NodeGpus> nodes;
  std::optional<Activity> activity; // the watchdog's verdict (app/request/watchdog_samples.hpp), when it sampled
};

// The srun step that runs nvidia-smi once per node in `nodes` (all of the job's, or the one of
// --node) and prints each task's answer after `@rv-node NAME`, `@rv-gpus RC`, `@rv-apps RC` lines
// (srun --label keeps the tasks apart). CUDA_VISIBLE_DEVICES is unset for nvidia-smi: an overlap
// step may get a smaller view otherwise.
proc::Command gpu_command(const std::string& job_id, const std::vector<std::string>& nodes, bool all_nodes);

// The nodes' answers from gpu_command's output; a node that printed nothing is an error entry.
std::vector<NodeGpus> parse_gpu_output(std::string_view out, const std::vector<std::string>& nodes);

// Queries `target` (node `node`, or every node with -1) and reads its watchdog samples, in one
// round trip.
Result<GpuReport> query_gpus(Env& env, const GpuTarget& target, int node);

// The table: NODE GPU NAME UTIL MEMORY TEMP PROCESSES, one line per GPU (a node's error on its
// own line), headed by the request, job and watchdog verdict.
std::string gpu_table(const GpuReport& report);

// The documented --json shape (docs/gpu.md).
nlohmann::json to_json(const GpuReport& report);

struct GpuOptions {
  std::string key;                   // request id, job id or job name; "" = the newest running
  int node = -1;                     // --node K: only the K-th node of the allocation
  std::optional<std::int64_t> watch; // --watch [SECONDS]: refresh every so often until Ctrl-C
};

// `rv gpu`: one report (or, with --watch, one per interval until interrupted or the job ends).
Result<int> show_gpus(Env& env, const GpuOptions& opts);

} // namespace rv::app
