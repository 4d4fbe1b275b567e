#pragma once
// The race loop: polls the request's jobs (one squeue call per poll for all of them, with
// backoff), falls back to scontrol then sacct for jobs that left squeue, cancels the losers the
// moment a winner is known, and cancels everything on an interrupt, a timeout or an error.

#include "core/clock.hpp"
#include "core/process/runner.hpp"
#include "slurm/backoff.hpp"
#include "slurm/race.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rv::slurm {

struct MonitorOptions {
  Backoff::Policy poll = Backoff::racing();
  std::chrono::milliseconds timeout{0}; // 0 = wait as long as it takes
  // A remote command whose stdout names the job holding the in-job claim ("" = don't ask).
  // With one, the claim decides the winner: once a sibling has started, rv waits (polling at
  // poll.initial) for the claim, up to claim_wait, before it decides by start time and rank.
  std::vector<std::string> claim_argv;
  std::chrono::milliseconds claim_wait{30000};
  // With one: between polls, rv runs this command (given the pause) instead of sleeping, a wait on
  // the login node that ends early once the claim is written (remote::wait_for_growth_command):
  // a start is seen within a look and two round trips, while squeue is still called once a pause.
  std::function<proc::Command(std::chrono::milliseconds)> wait_for_claim;
  // Called after every poll (state for `rv ps`-style progress and the request record).
  std::function<void(const Race&, const RaceDecision&)> on_update;
  // Called with job ids right before they are cancelled, so the caller can record it first.
  // Told the job ids an abandoned race (interrupt, timeout, error) did cancel; ids it could not
  // cancel are never passed here.
  std::function<void(const std::vector<std::string>&)> on_abandon_cancelled;
  std::function<void(const std::vector<std::string>&)> on_cancel;
  // The siblings' job name: every scancel of the race names it (see cancel_jobs). "" = none.
  std::string job_name;
  // With one: on the poll that decides the winner, a command about it (the caller's look at its
  // node) rides in the losers' scancel round trip, and `on_winner_read` gets its outcome (not
  // called when the command could not ride: no loser to cancel, or the scancel failed).
  std::function<std::optional<proc::Command>(const RaceEntry& winner)> winner_read;
  std::function<void(const proc::Outcome&)> on_winner_read;
};

struct RaceStats {
  int polls = 0;
  int controller_calls = 0; // squeue + scontrol + scancel calls (sacct goes to slurmdbd)
  std::vector<std::string> cancelled;
};

// Runs the race to its end: a winner (and every loser cancelled), or all siblings failed
// (an error naming why), or an interrupt/timeout (every job cancelled, then an error).
Result<RaceStats> run_race(proc::Runner& runner, Clock& clock, Race& race, const MonitorOptions& options);

// Whether scancel's stderr says only that its jobs no longer exist ("Invalid job id specified",
// every line): what `scancel --name=N ID` answers (exit 1) for a job that has already ended.
bool only_gone_jobs(std::string_view scancel_stderr);

// Cancels `job_ids` in one scancel call, even while an interrupt is pending. With `job_name`,
// Slurm itself cancels only those of the ids whose job still has that name (`scancel --name`
// intersects with the ids): a job id Slurm has since given to another job is left alone. With
// `pending_only`, only those still pending (`--state=PENDING`): one that started meanwhile runs on.
Result<void> cancel_jobs(proc::Runner& runner, const std::vector<std::string>& job_ids,
                         const std::string& job_name = {}, bool pending_only = false);

// Polls once: squeue for every id, then scontrol and sacct for the ids squeue no longer
// knows. `now_epoch` turns elapsed times into start times.
// With `names` (job id -> the job name rv gave it), a row whose name differs is another job that
// Slurm gave the same id (ids are reused) and is not believed; of several accounting records
// for one id, the latest with the right name is.
Result<std::map<std::string, JobView>> poll_jobs(proc::Runner& runner, const std::vector<std::string>& job_ids,
                                                 std::int64_t now_epoch, int* controller_calls = nullptr,
                                                 const std::map<std::string, std::string>& names = {});

// The ids squeue no longer knows: scontrol first (the controller still knows recently finished
// jobs), then accounting, which may lag; an id neither knows is left out (unknown, i.e. alive).
// `names` as for poll_jobs.
Result<std::map<std::string, JobView>> look_up_gone(proc::Runner& runner, const std::vector<std::string>& job_ids,
                                                    std::int64_t now_epoch,
                                                    const std::map<std::string, std::string>& names = {});

// How many times final_state asks before it gives up (about 40 s at the following cadence).
inline constexpr int k_final_state_polls = 15;

// A job that has ended (its log stopped, its step is gone): its final state and exit code, asked
// of scontrol and accounting at the following cadence until one of them has it.
Result<JobView> final_state(proc::Runner& runner, Clock& clock, const std::string& job_id);

} // namespace rv::slurm
