#pragma once
// How early jobs end: accounting's elapsed time against the time limit of every job that ran and
// ended on the cluster in the last day, counted per partition on the login node (the answer is a
// line per partition, not a row per job), read into model::EndRatios.

#include "core/model/cluster.hpp"
#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <map>
#include <string>
#include <string_view>

namespace rv::slurm {

// `sh -c '... sacct -a -X -n -P -S now-1days -E now -s CD,F,TO,OOM,NF,PR -o
// Partition,ElapsedRaw,TimelimitRaw ... | awk ...' rv-job-ends`: a line `PARTITION JOBS C0 .. C20`
// per partition (EndRatios' counts). Jobs that never ran (elapsed 0) and jobs without a limit are
// left out, and so are cancelled ones: when a cancelled job ended was someone's decision (a user,
// rv's own `rv stop`, a benchmark's purge), not how long such jobs run; leaving them out can only
// make the expected waits longer. Exit: sacct's when it fails (accounting unreachable), else 0. Repeatable (a read).
proc::Command job_ends_command();

// Whether `cmd` is job_ends_command (its cache entry is kept with the accounting facts).
bool is_job_ends_command(const proc::Command& cmd);

// The command's answer, by partition; an unreadable line is an error naming it.
Result<std::map<std::string, model::EndRatios>> parse_job_ends(std::string_view text);

} // namespace rv::slurm
