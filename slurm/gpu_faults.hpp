#pragma once
// Known signatures of broken GPU hardware or drivers in a job's stderr: a job that dies of one
// early is retried elsewhere, excluding the node.

#include <string>
#include <string_view>

namespace rv::slurm {

// Returns the first known GPU-fault signature found in `text` (case-insensitive), or "".
std::string find_gpu_fault(std::string_view text);

} // namespace rv::slurm
