#pragma once
// The race between a request's sibling jobs, as a pure state machine: each poll's
// observations go in, decisions (winner, jobs to cancel, hopeless jobs) come out.

#include "slurm/job_state.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rv::slurm {

// What one poll learned about one job.
struct JobView {
  JobState state = JobState::unknown;
  std::string reason;           // pending reason, "" if none
  std::string nodes;            // allocated nodes (hostlist), "" if none
  std::int64_t start_epoch = 0; // when it started, 0 if not (yet) known
  std::string source;           // squeue, scontrol, sacct, or "" when no record was found
  std::string start_estimate;   // pending: Slurm's expected start (cluster-local time), "" if none
  std::int64_t elapsed_s = 0;   // run time so far (squeue %M, scontrol RunTime, sacct Elapsed)
  int exit_status = 0;          // an ended job's ExitCode=status:signal (scontrol, sacct)
  int exit_signal = 0;
  std::int64_t seen_epoch = 0; // rv's clock at the poll that read it from squeue (0 = not from squeue)
};

// One sibling of the request.
struct RaceEntry {
  std::string strategy_id;
  std::string job_id;
  JobView last;
  bool cancel_sent = false;
  std::string hopeless_reason; // set once its pending reason shows it can never start
};

// What to do after a poll.
struct RaceDecision {
  std::optional<std::size_t> new_winner;   // set on the poll that decides the winner
  std::vector<std::string> cancel;         // job ids to scancel now
  std::vector<std::size_t> newly_hopeless; // entries found hopeless on this poll
  bool all_failed = false;                 // every sibling ended (or is hopeless) without a winner
  // A job that holds the claim but was no sibling (its sbatch's answer was lost, N3): added to the
  // entries as strategy "orphan-<job id>" on this poll; "" when none.
  std::string adopted;
};

class Race {
public:
  // `entries` in rank order: a tie between siblings that started in the same poll goes to the
  // claimant (the job holding the in-job claim), then the earliest start, then the better rank.
  explicit Race(std::vector<RaceEntry> entries);

  // Feeds one poll's views (job id -> view; missing ids mean "no news", kept alive).
  // `claimant` is the job id that holds the in-job claim, when known: that sibling is the winner;
  // a claimant that is no sibling is adopted as a new entry (RaceDecision::adopted) and wins.
  // Without one, a winner is picked among the started siblings (earliest start, then rank)
  // only when `decide_without_claimant`; else the decision waits for a later poll.
  RaceDecision observe(const std::map<std::string, JobView>& views, const std::string& claimant = {},
                       bool decide_without_claimant = true);

  // Job ids that are not known to be over and have no cancel sent: for Ctrl-C, timeouts, errors.
  std::vector<std::string> cancel_all();

  // Records that a cancel was sent to `job_id` (e.g. by cancel_all's caller).
  void mark_cancelled(const std::string& job_id);

  const std::vector<RaceEntry>& entries() const { return m_entries; }
  std::optional<std::size_t> winner() const { return m_winner; }
  // True when at least `min_candidates` siblings have started this poll and no winner is known
  // (the caller may read the claim).
  bool needs_claimant(const std::map<std::string, JobView>& views, int min_candidates = 2) const;
  // True on the poll that would end the race without a winner (every sibling over or hopeless)
  // when a sibling that rv did not cancel shows CANCELLED without having started: what the guard
  // of a claiming job does to its siblings. The claimant may be a job rv does not track (N3), so
  // the caller reads the claim once before it gives up.
  bool cancelled_by_a_claim(const std::map<std::string, JobView>& views) const;

private:
  std::vector<RaceEntry> m_entries;
  std::optional<std::size_t> m_winner;
};

} // namespace rv::slurm
