#pragma once
// rv's expected wait. Slurm's backfill plan (what `sbatch --test-only` and `squeue --start` say)
// has every job run to its time limit; most end well before (on the benchmark's queues real waits
// were a median 0.37 of Slurm's estimate: docs/benchmark-time-to-gpu.md). From the queue snapshot
// and how early the last day's jobs ended on each partition (model::EndRatios, from sacct), the
// queue is replayed k_replays times: in each, every running job ends at a ratio drawn from how jobs
// like it ended, the pending jobs Slurm planned (all taken as ahead of this one: their
// reservations hold their nodes) start as soon as their nodes have room and end early too, and
// the candidate starts at the first moment `nodes` of its nodes have its GPUs free for its
// walltime. The expected wait is the median of those starts: a start that
// needs several jobs to end is as late as the last of them, which the jobs' median ends alone
// would put too soon. The draws are fixed per job id (the same snapshot, the same answer). Pure.

#include "core/model/cluster.hpp"
#include "core/model/queue.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/window_model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rv::strategy {

// A partition's ratios count once this many of its jobs ended in the last day; below that the
// cluster's (every partition's ended jobs together) stand in, when that many ended there.
inline constexpr int k_min_end_jobs = 20;

// How many times the queue is replayed (odd: the median is one of them).
inline constexpr int k_replays = 33;

// The `q` quantile (0..1) of where a job that has used `used` of its limit (0..1) ends, as a share
// of its limit, from the partition's ratios above `used` (spread evenly within each step); 1 (its
// limit) when fewer than 3 of the jobs ended past `used`. Never below `used`.
double end_ratio_quantile(const model::EndRatios& r, double used, double q);
// The quantiles at (i + 0.5) / n, i = 0..n-1 (the draws of k_replays replays), in one pass.
std::vector<double> end_ratio_quantiles(const model::EndRatios& r, double used, int n);

// Where a job that has used `used` of its limit is expected to end: end_ratio_quantile at 0.5.
double expected_end_ratio(const model::EndRatios& r, double used);

// Each queued job's drawn ends, made once per plan: every candidate whose nodes a job is on
// replays it with the same draws (they depend on the job alone), and the ratios each partition's
// jobs are drawn from. Filled as candidates ask; the same job, the same draws.
class EndDraws {
public:
  explicit EndDraws(const model::Cluster& cluster);
  using Ends = std::array<std::int64_t, k_replays>;
  // The ratios a job of `partition` is drawn from: the partition's own once k_min_end_jobs ended
  // there, else the whole cluster's when that many ended across its partitions (how early jobs end
  // is more alike across a cluster's partitions than their lengths), else none (to their limits).
  struct Source {
    const model::EndRatios* ratios = nullptr;
    bool own = false;
  };
  Source of(const std::string& partition) const;
  // A running job's end per replay (from the snapshot, never past its limit), or a pending job's
  // run per replay (as if it started now; forever when it has no limit). Null for a running job
  // with unknown times.
  const Ends* ends(const model::QueuedJob& j);

private:
  const model::Cluster& cluster_;
  model::EndRatios pooled_;
  std::unordered_map<const model::QueuedJob*, Ends> ends_; // references stay valid as it grows
};

struct ExpectedWait {
  std::int64_t wait_s = 0;
  std::string why; // one line for --dry-run
};

// The expected waits of candidate `c`'s strategies: its nodes' jobs are gathered once per
// candidate (their draws from the plan's `draws`), then each strategy asks with its walltime and
// Slurm's wait for it.
class ExpectedWaits {
public:
  ExpectedWaits(const model::Cluster& cluster, const QueueIndex& queue, const Candidate& c, EndDraws& draws);
  // The expected wait of a strategy with walltime `walltime_s` that Slurm's plan starts in
  // `slurm_wait_s`. nullopt when the model has nothing better: no queue snapshot, fewer than
  // k_min_end_jobs ended jobs on the partition and on the cluster, or a median start no sooner
  // than Slurm's.
  std::optional<ExpectedWait> at(std::int64_t walltime_s, std::int64_t slurm_wait_s) const;

private:
  // A job of the snapshot on the candidate's nodes.
  struct Drawn {
    std::vector<std::pair<std::size_t, int>> on; // (node index, GPUs of the candidate's type)
    std::int64_t start = 0;                      // pending: Slurm's planned start
    const EndDraws::Ends* ends = nullptr;        // per replay: running, its end; pending, its run
  };
  bool ready_ = false;
  bool first_come_ = false; // SchedulerConfig::first_come
  std::string partition_;
  int gpus_per_node_ = 0;
  std::ptrdiff_t nodes_wanted_ = 1;
  int own_jobs_ = 0;          // the ended jobs the ratios come from
  bool own_partition_ = true; // false: the cluster's, the partition had too few
  double median_ratio_ = 0;
  std::vector<int> free_now_; // per usable node of the candidate
  std::vector<Drawn> running_;
  std::vector<Drawn> pending_; // in Slurm's planned order
};

// One strategy's expected wait (ExpectedWaits for one question).
inline std::optional<ExpectedWait> expected_wait(const model::Cluster& cluster, const QueueIndex& queue,
                                                 const Candidate& c, std::int64_t walltime_s, std::int64_t slurm_wait_s)
{
  EndDraws draws(cluster);
  return ExpectedWaits(cluster, queue, c, draws).at(walltime_s, slurm_wait_s);
}
inline std::optional<ExpectedWait> expected_wait(const model::Cluster& cluster, const model::QueueSnapshot& queue,
                                                 const Candidate& c, std::int64_t walltime_s, std::int64_t slurm_wait_s)
{
  return expected_wait(cluster, QueueIndex(cluster, queue), c, walltime_s, slurm_wait_s);
}

} // namespace rv::strategy
