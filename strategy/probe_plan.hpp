#pragma once
// Backfill probe policy and windows: which walltimes to probe for each candidate (the coarse
// grid), and what the answers mean (the window that starts now). Running the probes and reading
// sbatch's answers is slurm/probe.hpp's; app/run/planning joins the two.

#include "core/model/queue.hpp"
#include "core/result.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/options.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::strategy {

// The coarse walltimes for `c`: the grid entries below probe_full_s, then probe_full_s itself.
std::vector<std::int64_t> coarse_grid(const Candidate& c, const PlanOptions& opts);

// One `sbatch --test-only` answer.
struct ProbeResult {
  std::int64_t walltime_s = 0;
  std::optional<std::int64_t> start_in_s; // start - now (>= 0); nullopt = FAIL
  std::string message;                    // sbatch's words, for FAIL explanations
  bool refused = false;                   // Slurm refused the request outright (message says why)
};

// Every answer for one candidate, in the order run.
struct CandidateProbes {
  std::string candidate_id;
  std::vector<ProbeResult> probes;
  bool complete = false; // the probing finished (not cut off)
};

// What the probes say about one candidate (of its shape).
struct Window : model::Shape {
  std::string candidate_id;
  std::vector<ProbeResult> probes;             // in the order run
  std::int64_t max_now_s = 0;                  // longest walltime that starts within the threshold; 0 = none
  std::optional<std::int64_t> now_start_in_s;  // start_in of that probe
  std::int64_t full_walltime_s = 0;            // the candidate's probe_full_s
  std::optional<std::int64_t> full_start_in_s; // start estimate for probe_full_s; nullopt = unknown
  bool complete = false;                       // the probing finished
  std::string refused;                         // Slurm refused every probe: its reason; "" otherwise
  std::vector<std::string> notes;
};

// What rv knows about backfill windows: the probes' answers and the scheduler's queue.
struct Windows {
  std::vector<Window> list;
  model::QueueSnapshot queue; // known = false: no queue model, the probes alone decide
  // The window measured for this exact shape, or nullptr.
  const Window* find(const model::Shape& shape) const;
};

// The windows of `candidates` from their probes; candidates without probes get no window. A
// probe starts "now" when its start_in_s <= opts.now_threshold_s; the window is the longest such
// walltime below the shortest walltime that does not start now (so a non-monotonic answer never
// widens it). When Slurm refused every probe, `refused` carries its reason.
Windows make_windows(const std::vector<CandidateProbes>& probed, const std::vector<Candidate>& candidates,
                     const PlanOptions& opts);

} // namespace rv::strategy
