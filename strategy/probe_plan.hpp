#pragma once
// Backfill probes: the `sbatch --test-only` calls for every candidate, as ONE POSIX sh script the
// login node runs (coarse grid and refinement happen there, in one round trip), and the parser of
// its output into windows.
//
// Output protocol, one record per line (fields separated by single spaces):
//   NOW <epoch>                                   login node clock, read right before the probe
//   PROBE <cid> <walltime_s> <start_epoch|FAIL> <message, sanitized: printable ASCII, one line>
//   DONE <cid>                                    the candidate's probing finished
// Start times are converted to epochs on the login node with `date -d`, in the login node's own
// timezone (the one Slurm prints in), so the laptop's timezone never enters.

#include "core/result.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/options.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::strategy {

// The probe arguments of one candidate, minus --time (which the script varies).
std::vector<std::string> probe_args(const Candidate& c);

// The coarse walltimes for `c`: the grid entries below probe_full_s, then probe_full_s itself.
std::vector<std::int64_t> coarse_grid(const Candidate& c, const PlanOptions& opts);

// The whole probe script for `candidates` (every argument single-quoted).
std::string probe_script(const std::vector<Candidate>& candidates, const PlanOptions& opts);

// One `sbatch --test-only` answer.
struct ProbeResult {
  std::int64_t walltime_s = 0;
  std::optional<std::int64_t> start_in_s; // start - now (>= 0); nullopt = FAIL
  std::string message;                    // sbatch's words, for FAIL explanations
};

// What the probes say about one candidate.
// What the probes say about one candidate (of its shape).
struct Window : model::Shape {
  std::string candidate_id;
  std::vector<ProbeResult> probes;           // in the order run
  std::int64_t max_now_s = 0;                // longest walltime that starts within the threshold; 0 = none
  std::optional<std::int64_t> now_start_in_s;  // start_in of that probe
  std::int64_t full_walltime_s = 0;          // the candidate's probe_full_s
  std::optional<std::int64_t> full_start_in_s; // start estimate for probe_full_s; nullopt = unknown
  bool complete = false;                     // DONE seen
  std::vector<std::string> notes;
};

struct Windows {
  std::vector<Window> list;
  // The window measured for this exact shape, or nullptr.
  const Window* find(const model::Shape& shape) const;
};

// Parses the script's output for `candidates`. Lines for unknown ids and noise are skipped;
// candidates with no PROBE lines get no window. A probe starts "now" when
// start - NOW <= opts.now_threshold_s; the window is the longest such walltime below the shortest
// walltime that does not start now (so a non-monotonic answer never widens it).
Windows parse_probe_output(std::string_view output, const std::vector<Candidate>& candidates, const PlanOptions& opts);

} // namespace rv::strategy
