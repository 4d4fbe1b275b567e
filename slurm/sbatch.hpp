#pragma once
// What `sbatch --test-only` (stderr) and `sbatch --parsable` (stdout) answer.

#include "core/result.hpp"
#include "slurm/cluster_time.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// A will-run estimate. The start time is cluster wall-clock time: convert it with
// to_unix_seconds(start, cluster.utc_offset_s), never with the laptop's zone.
struct TestOnlyEstimate {
  std::string job_id;
  ClusterTime start;
  int processors = 0;
  std::string nodes;                 // hostlist; "" before 18.08 (no `on nodes`)
  std::string partition;             // "" when the controller left ` in partition` out
  std::string cluster;               // `on cluster <name>` (25.05+, federation), else ""
  std::vector<std::string> preempts; // `Preempts: 12,13`
  std::vector<std::string> messages; // other lines (job_submit plugin messages...)
};

// Parses `sbatch --test-only` stderr (all known versions, the 25.05 ` a using` typo too).
// `allocation failure: ...` and `sbatch: error: ...` become slurm_rejected errors carrying
// Slurm's message; text with no Job line is a parse error.
Result<TestOnlyEstimate> parse_test_only(std::string_view stderr_text);

// A submitted job.
struct Submitted {
  std::string job_id;
  std::string cluster; // `123;cluster` on multi-cluster setups, else ""
};

// Parses `sbatch --parsable` stdout: `123` or `123;cluster` (warnings on other lines ignored).
Result<Submitted> parse_sbatch_parsable(std::string_view stdout_text);

} // namespace rv::slurm
