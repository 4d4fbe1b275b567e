#pragma once
// Following a job: stream its logs until it ends, then read its final state.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/run/show/final_status.hpp"
#include "core/clock.hpp"
#include "core/process/runner.hpp"

#include <functional>
#include <optional>
#include <string>

namespace rv::app {

// The job's final state and exit code: scontrol first, then accounting (which may lag).
Result<FinalStatus> final_status(proc::Runner& runner, const std::string& job_id, Clock& clock);

// Called when a checkpoint segment resubmitted itself: (ended job id, next job id).
using NextSegment = std::function<void(const std::string&, const std::string&)>;

// A read that rides in another round trip, and what is done with its answer (not called when
// that round trip fails).
struct AlongRead {
  proc::Command cmd;
  std::function<void(const proc::Outcome&)> done;
};

// How the follow begins. `just_started` (rv run -f, right after the race saw the winner start):
// the race's last squeue counts as the first poll, and the first read is led by a wait on the
// login node for the job's first output, in the same round trip (issue #38 item 7). `along` rides
// in that first round trip (the winner's node read).
struct FollowStart {
  bool just_started = false;
  std::optional<AlongRead> along;
};

// Streams the job's .out to `output.out` and .err to `output.err` (from `out_offset`/`err_offset` bytes)
// until it ends; returns its final status. A checkpoint job that resubmitted itself (it leaves
// the next job id in <remote_root>/requests/<id>/next.<job id>) is followed into its next
// segment, and `on_next` is told. An interrupt stops following, not the job.
// Each read after a pause is one round trip: the wait on the login node for the logs to grow, then
// the reads of both logs, in one batch.
Result<FinalStatus> follow_job(proc::Runner& runner, Clock& clock, Output& output, const RequestRecord& r,
                               const JobRecord& job, std::size_t out_offset = 0, std::size_t err_offset = 0,
                               const NextSegment& on_next = {}, FollowStart start = {});

// Maps a final state to rv's exit code (docs/exit-codes.md) and logs what failed.
int exit_code_of(const FinalStatus& s, const std::string& job_id);

} // namespace rv::app
