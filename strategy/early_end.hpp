#pragma once
// rv's expected wait. Slurm's backfill plan (what `sbatch --test-only` and `squeue --start` say)
// has every job run to its time limit; most end well before (on the benchmark's queues real waits
// were a median 0.37 of Slurm's estimate: docs/benchmark-time-to-gpu.md). From the queue snapshot
// and how early the last day's jobs ended on each partition (model::EndRatios, from sacct), the
// running jobs end when jobs like them did, the pending jobs Slurm planned ahead of this one start
// as soon as their nodes have room and end early too, and the candidate starts at the first moment
// `nodes` of its nodes have its GPUs free for its walltime. Pure.

#include "core/model/cluster.hpp"
#include "core/model/queue.hpp"
#include "strategy/enumerate.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace rv::strategy {

// A partition's ratios count once this many of its jobs ended in the last day.
inline constexpr int k_min_end_jobs = 20;

// Where a job that has used `used` of its limit (0..1) is expected to end, as a share of its
// limit: the median of the partition's ratios above `used` (spread evenly within each step); 1
// (its limit) when fewer than 3 of the jobs ended past `used`. Never below `used`.
double expected_end_ratio(const model::EndRatios& r, double used);

struct ExpectedWait {
  std::int64_t wait_s = 0;
  std::string why; // one line for --dry-run
};

// The expected wait of a strategy of `c` with walltime `walltime_s` that Slurm's plan starts in
// `slurm_wait_s`. nullopt when the model has nothing better: no queue snapshot, fewer than
// k_min_end_jobs ended jobs on the partition, or no start before Slurm's.
std::optional<ExpectedWait> expected_wait(const model::Cluster& cluster, const model::QueueSnapshot& q,
                                          const Candidate& c, std::int64_t walltime_s, std::int64_t slurm_wait_s);

} // namespace rv::strategy
