#pragma once
// `sacct --parsable2 --noheader` rows for the jobs rv submitted (steps are skipped).

#include "core/model/cluster.hpp"
#include "core/result.hpp"
#include "slurm/cluster_time.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// One job allocation as accounting recorded it.
struct SacctJob {
  std::string job_id;
  std::string state;                    // first word: CANCELLED (from `CANCELLED by 0`), COMPLETED...
  std::string state_detail;             // the whole field, e.g. `CANCELLED by 0`
  int exit_status = 0, exit_signal = 0; // ExitCode=status:signal
  std::int64_t elapsed_s = 0;
  std::optional<ClusterTime> start_time, end_time; // cluster-local
  std::string nodes;                               // NodeList, "" for None assigned
  std::string alloc_tres;
  std::vector<model::GpuGres> gpus; // from AllocTRES
  std::string partition, name;
  std::string reason; // Reason (when asked for): the last reason it waited or ended, "" for None
};

// The fields rv asks for, in order (JobName last: it may contain the delimiter).
inline constexpr std::string_view sacct_fields =
    "JobID,State,ExitCode,Elapsed,Start,End,NodeList,AllocTRES,Partition,JobName";

// The argv rv runs: `env SLURM_TIME_FORMAT=standard sacct --parsable2 --noheader -j ID,ID
// -o <sacct_fields>` (steps come back too and the parser skips them).
// `fields` may ask for others (any that parse_sacct reads, e.g. with Reason).
std::vector<std::string> sacct_argv(const std::vector<std::string>& job_ids, std::string_view fields = sacct_fields);

// A user's jobs (allocations only) of the last 30 days, for rv status's usage: `env
// SLURM_TIME_FORMAT=standard sacct --parsable2 --noheader -X -S now-30days -E now [-u USER] -o
// <sacct_fields>` (without a user, sacct's default: the caller's own).
std::vector<std::string> recent_jobs_argv(const std::string& user);

// Parses rv's field order, or any `-P` output that starts with a header naming the columns
// (JobID, State, ExitCode, ...). Rows whose JobID is a step (`123.batch`) are skipped.
Result<std::vector<SacctJob>> parse_sacct(std::string_view text);

// Parses headerless output of `-o <fields>` (comma list, any case); a header still wins.
Result<std::vector<SacctJob>> parse_sacct(std::string_view text, std::string_view fields);

} // namespace rv::slurm
