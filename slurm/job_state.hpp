#pragma once
// Slurm job states as rv reasons about them.

#include <string>
#include <string_view>

namespace rv::slurm {

enum class JobState {
  pending,
  configuring,
  running,
  completing,
  completed,
  failed,
  cancelled,
  timeout,
  out_of_memory,
  node_fail,
  preempted,
  boot_fail,
  deadline,
  requeued,  // REQUEUED, REQUEUE_HOLD, REQUEUE_FED
  suspended, // SUSPENDED, STOPPED
  unknown,   // anything else, or no record yet: counts as alive
};

// Reads a state as squeue, scontrol or sacct print it (`RUNNING`, `R`, `CANCELLED by 0`,
// `CANCELLED+`, `OUT_OF_MEMORY`, `NODE_FAIL`); anything unrecognised is `unknown`.
JobState parse_job_state(std::string_view text);

// Names the state in Slurm's spelling (`OUT_OF_MEMORY`).
const char* to_string(JobState state);

// Tells whether the job can never run again.
bool is_terminal(JobState state);

// Tells whether the state means the job holds (or held) its allocation.
bool is_started(JobState state);

} // namespace rv::slurm
