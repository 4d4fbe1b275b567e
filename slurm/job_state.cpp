#include "slurm/job_state.hpp"

#include <array>
#include <utility>

namespace rv::slurm {

JobState parse_job_state(std::string_view text)
{
  while (!text.empty() && (text.back() == ' ' || text.back() == '+' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  if (auto sp = text.find(' '); sp != std::string_view::npos) {
    text = text.substr(0, sp); // "CANCELLED by 1000"
  }
  static constexpr std::array<std::pair<std::string_view, JobState>, 37> k_names = {{
      {"PENDING", JobState::pending},
      {"PD", JobState::pending},
      {"CONFIGURING", JobState::configuring},
      {"CF", JobState::configuring},
      {"RUNNING", JobState::running},
      {"R", JobState::running},
      {"COMPLETING", JobState::completing},
      {"CG", JobState::completing},
      {"COMPLETED", JobState::completed},
      {"CD", JobState::completed},
      {"FAILED", JobState::failed},
      {"F", JobState::failed},
      {"CANCELLED", JobState::cancelled},
      {"CA", JobState::cancelled},
      {"TIMEOUT", JobState::timeout},
      {"TO", JobState::timeout},
      {"OUT_OF_MEMORY", JobState::out_of_memory},
      {"OOM", JobState::out_of_memory},
      {"NODE_FAIL", JobState::node_fail},
      {"NF", JobState::node_fail},
      {"PREEMPTED", JobState::preempted},
      {"PR", JobState::preempted},
      {"BOOT_FAIL", JobState::boot_fail},
      {"BF", JobState::boot_fail},
      {"DEADLINE", JobState::deadline},
      {"DL", JobState::deadline},
      {"REQUEUED", JobState::requeued},
      {"RQ", JobState::requeued},
      {"REQUEUE_HOLD", JobState::requeued},
      {"REQUEUE_FED", JobState::requeued},
      {"SUSPENDED", JobState::suspended},
      {"S", JobState::suspended},
      {"STOPPED", JobState::suspended},
      {"ST", JobState::suspended},
      {"SIGNALING", JobState::running},
      {"STAGE_OUT", JobState::completing},
      {"RESIZING", JobState::running},
  }};
  for (const auto& [name, state] : k_names) {
    if (text == name) {
      return state;
    }
  }
  return JobState::unknown;
}

const char* to_string(JobState state)
{
  switch (state) {
  case JobState::pending:
    return "PENDING";
  case JobState::configuring:
    return "CONFIGURING";
  case JobState::running:
    return "RUNNING";
  case JobState::completing:
    return "COMPLETING";
  case JobState::completed:
    return "COMPLETED";
  case JobState::failed:
    return "FAILED";
  case JobState::cancelled:
    return "CANCELLED";
  case JobState::timeout:
    return "TIMEOUT";
  case JobState::out_of_memory:
    return "OUT_OF_MEMORY";
  case JobState::node_fail:
    return "NODE_FAIL";
  case JobState::preempted:
    return "PREEMPTED";
  case JobState::boot_fail:
    return "BOOT_FAIL";
  case JobState::deadline:
    return "DEADLINE";
  case JobState::requeued:
    return "REQUEUED";
  case JobState::suspended:
    return "SUSPENDED";
  case JobState::unknown:
    return "UNKNOWN";
  }
  return "UNKNOWN";
}

bool is_terminal(JobState state)
{
  switch (state) {
  case JobState::completed:
  case JobState::failed:
  case JobState::cancelled:
  case JobState::timeout:
  case JobState::out_of_memory:
  case JobState::node_fail:
  case JobState::preempted:
  case JobState::boot_fail:
  case JobState::deadline:
    return true;
  default:
    return false;
  }
}

bool is_started(JobState state)
{
  switch (state) {
  case JobState::configuring: // nodes allocated, booting: the allocation is ours
  case JobState::running:
  case JobState::completing:
  case JobState::completed:
  case JobState::suspended:
    return true;
  default:
    return false;
  }
}

} // namespace rv::slurm
