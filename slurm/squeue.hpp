#pragma once
// `squeue` rows: rv's pipe format, and the default/`--start` layouts read by their header.

#include "core/result.hpp"
#include "slurm/cluster_time.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// One job as squeue prints it.
struct SqueueJob {
  std::string job_id;                              // %i (array tasks as 123_4)
  std::string state;                               // long form: PENDING, RUNNING, ... (short codes are expanded)
  std::string reason;                              // %r without parentheses; "" for None
  std::string partition;                           // %P; a pending multi-partition job prints `a,b`
  std::string nodes;                               // %N allocated hostlist, or SCHEDNODES with --start
  int node_count = 0;                              // %D
  std::optional<ClusterTime> start_time, end_time; // %S, %e: cluster-local
  std::int64_t time_limit_s = -1;                  // %l; -1 = UNLIMITED
  std::int64_t elapsed_s = 0;                      // %M
  std::string tres_per_node;                       // %b; "" for N/A
  std::string comment;                             // %k; "" for (null)
  std::string user;                                // %u
  std::int64_t priority = -1;                      // %Q; -1 = not asked for (0 = held)
  std::string name;                                // %j (last: it may contain '|')
};

// The argv rv runs: `env SLURM_TIME_FORMAT=standard squeue -h -t all -j ID,ID
// -o '%i|%T|%r|%P|%N|%D|%S|%e|%l|%M|%b|%j'` (env pins the ISO time format).
std::vector<std::string> squeue_argv(const std::vector<std::string>& job_ids);

// Any user's jobs in `states` (`PD`, `R,CG`, `all`), of `partitions` and `job_ids` when given:
// `env SLURM_TIME_FORMAT=standard squeue -h -t STATES [-p P,P] [-j ID,ID] -o FORMAT`.
std::vector<std::string> squeue_query_argv(std::string_view states, const std::vector<std::string>& partitions,
                                           const std::vector<std::string>& job_ids, std::string_view format);

// The `-o` format squeue_argv uses.
inline constexpr std::string_view squeue_format = "%i|%T|%r|%P|%N|%D|%S|%e|%l|%M|%b|%j";

// Parses rv's format, or a blank-aligned table with a JOBID header (default, --start).
// Lines with too few fields are skipped; fails only when a time field is malformed.
Result<std::vector<SqueueJob>> parse_squeue(std::string_view text);

// Parses headerless output of any `-o` format built from %i %A %T %t %r %R %P %N %Y %D %S %e
// %l %M %b %k %u %Q %j (others are ignored), its fields split by the format's own literal separators
// (`|`, `%i|%E;%R`, or blanks for `%.10i %20j`, which match any run of padding); a last %j keeps
// any separator in the name. A header-led table names its columns, `-o` or `-O` style; a
// delimited row with more fields than the header gets the extra ones back into NAME.
Result<std::vector<SqueueJob>> parse_squeue(std::string_view text, std::string_view format);

// The jobs of one rv request, for finding what a killed or interrupted rv submitted: only the
// user's own jobs (`--me`, Slurm 20.11+) named `job_name`, any state:
// `squeue --me -h -t all -n NAME -o '%i|%T|%k|%j'`. Read it with request_jobs(), which keeps only
// the jobs whose comment is rv's `rv:<request id>`: a name alone is shared by the user's other jobs.
// `env SLURM_TIME_FORMAT=standard squeue -h (--me | -u USER) -o <squeue_format>`: a user's jobs.
std::vector<std::string> user_jobs_argv(const std::string& user);

std::vector<std::string> request_jobs_argv(std::string_view job_name);
inline constexpr std::string_view request_jobs_format = "%i|%T|%k|%j";
Result<std::vector<SqueueJob>> request_jobs(std::string_view text, std::string_view request_id);

// The user's own jobs pending or running (squeue's default states), with their comments:
// `squeue --me -h -o '%i|%T|%k|%j'`; read it with parse_squeue(text, request_jobs_format).
std::vector<std::string> my_jobs_argv();
// How many of `jobs` are not of request `request_id` (comment `rv:<id>`): the user's other work,
// which counts against MaxSubmitJobs and MaxJobs as much as the request's own jobs.
int jobs_not_of(const std::vector<SqueueJob>& jobs, std::string_view request_id);

// Expands squeue's compact state codes (`PD` -> PENDING); long names are returned as is.
std::string long_job_state(std::string_view state);

} // namespace rv::slurm
