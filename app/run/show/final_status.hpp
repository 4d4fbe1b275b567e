#pragma once
// How a followed job ended: read by app/run/show/follow.hpp (final_status), shown by the
// renderers (app/run/show/status_view.hpp: the `ended` event) and mapped to rv's exit code by
// the launch. Plain data, in a header of its own so that a pure renderer needs no follower.

#include "slurm/job_state.hpp"

#include <cstdint>
#include <string>

namespace rv::app {

struct FinalStatus {
  slurm::JobState state = slurm::JobState::unknown; // completed, failed, timeout, ...
  int exit_status = 0;
  int exit_signal = 0;
  std::int64_t run_time_s = -1; // how long it ran (not queued); -1 = unknown
  std::string job_id;           // the job that ended: the last checkpoint segment's when resubmitted
};

} // namespace rv::app
