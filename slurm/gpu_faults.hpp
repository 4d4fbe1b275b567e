#pragma once
// What a job's stderr says about its node's GPUs: known signatures of broken GPU hardware or
// drivers (a job that dies of one early is retried elsewhere, excluding the node), and the line
// rv's in-job preflight writes when a node fails it (docs/preflight.md).

#include <optional>
#include <string>
#include <string_view>

namespace rv::slurm {

// The job's exit code when the in-job preflight failed on a node (docs/exit-codes.md).
inline constexpr int k_preflight_exit = 96;

// Returns the first known GPU-fault signature found in `text` (case-insensitive), or "".
std::string find_gpu_fault(std::string_view text);

// A node that failed the preflight, from its line `rv preflight: FAIL node=NODE [scope=request]
// reason=TEXT`. `scope=request`: every node would fail it (a container image that cannot be pulled,
// a work directory the container cannot see), so racing again elsewhere cannot help.
struct PreflightFailure {
  std::string node;
  std::string reason;
  bool whole_request = false;
};

// The last preflight failure line in `text` (a job's stderr), or nullopt.
std::optional<PreflightFailure> find_preflight_failure(std::string_view text);

} // namespace rv::slurm
