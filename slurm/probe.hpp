#pragma once
// Backfill probes: many `sbatch --test-only` calls as ONE POSIX sh script the login node runs (a
// coarse grid of walltimes, then a bisection of the cliff, all in one round trip; several shapes
// at once, bounded by ProbePolicy::concurrency), and the reader of its output. The script returns every sbatch answer raw, framed by its byte length; rv reads
// each one with parse_test_only (slurm/sbatch.hpp), the one parser of test-only answers.
//
// Output protocol (LC_ALL=C: lengths are bytes):
//   NOW <epoch> <utc offset, date +%z>     before each probe: the login node's clock when the script
//                                          started (one timestamp for every wait) and its zone
//   PROBE <id> <walltime_s> <n>            followed by n bytes: sbatch's stdout+stderr, then "\n"
//   DONE <id>                              the job's probing finished
// With concurrency, each job's records are buffered in a temp file and printed in job order, so
// the output is the same as one after another (NOW lines included: each precedes its PROBE).
// Inside the script, a start time is read with `sed` + `date -d` only to steer the bisection;
// what rv believes is what parse_test_only reads from the raw answer, converted with the NOW
// line's offset (never the laptop's zone).

#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// What one probe asks Slurm for (one task per node), minus --time, which the script varies.
struct ProbeRequest {
  std::string partition;
  int nodes = 1;
  int cpus_per_task = 1;
  std::int64_t mem_mb_per_node = 0;
  std::string gres;       // per node, e.g. "gpu:a100:4"
  std::string constraint; // "" = none
  std::string account;    // "" = none
  std::string qos;        // "" = none
  std::string exclude;    // comma-joined node names, "" = none
};

// The sbatch arguments of one probe: `--job-name=rv-probe --output=/dev/null ... --wrap=true`.
std::vector<std::string> probe_args(const ProbeRequest& r);

// One shape to probe: its id (letters, digits, '-', '_'), the coarse walltimes in ascending order
// (the last is the full request), and the request.
struct ProbeJob {
  std::string id;
  std::vector<std::int64_t> grid_s;
  ProbeRequest request;
};

// When to stop refining: a probe "starts now" when it would start within `now_threshold_s`;
// bisection stops when the bracket is narrower than `resolution_s` or after `max_refinements`.
// `concurrency` shapes are probed at the same time (each shape's own probes stay sequential: the
// bisection needs the previous answer), clamped to 1..k_max_concurrency so that slurmctld is not
// flooded; their answers still come back in the order of the jobs.
struct ProbePolicy {
  std::int64_t now_threshold_s = 300;
  std::int64_t resolution_s = 900;
  int max_refinements = 12;
  int concurrency = 1;
};
inline constexpr int k_max_concurrency = 16;

// The whole script (every argument single-quoted), for `sh -c` on the login node.
std::string probe_script(const std::vector<ProbeJob>& jobs, const ProbePolicy& policy);

// One probe's answer.
struct ProbeAnswer {
  std::string id;
  std::int64_t walltime_s = 0;
  std::optional<std::int64_t> start_in_s; // >= 0; nullopt: no estimate (refused or unreadable)
  bool refused = false;                   // Slurm refused the request (its reason in `message`)
  std::string message;                    // Slurm's words: the refusal, or the answer's first line
};

struct ProbeOutput {
  std::vector<ProbeAnswer> answers; // in the order run
  std::set<std::string> done;       // ids whose DONE line came
  std::vector<std::string> notes;   // what was skipped and why
};

// Reads the script's output; noise (login banners) and malformed records are skipped with a note.
ProbeOutput parse_probe_output(std::string_view output);

} // namespace rv::slurm
