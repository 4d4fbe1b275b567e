#include "app/run/show/follow.hpp"

#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "slurm/backoff.hpp"
#include "slurm/job_state.hpp"
#include "slurm/monitor.hpp"
#include "slurm/sacct.hpp"
#include "slurm/scontrol.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace rv::app {
namespace {

// The job id a resubmitted checkpoint segment left for rv, or "".
std::string next_segment(proc::Runner& runner, const RequestRecord& r, const std::string& job_id)
{
  if (r.remote_root.empty()) {
    return {};
  }
  auto o = runner.run(proc::remote::read_command(fmt::format("{}/requests/{}/next.{}", r.remote_root, r.id, job_id)));
  if (!o || !o->ok()) {
    return {};
  }
  std::string id = o->out;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) {
    id.pop_back();
  }
  const bool digits = !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
  return digits ? id : std::string();
}

// Until `until`: a wait on the login node that new output ends early. After a read that got
// output it begins a quarter second after that read (at most four reads a second while a job
// prints), after one that got none at once (the first line shows as soon as it is written). A
// wait that could not run sleeps here.
void wait_for_output(proc::Runner& runner, Clock& clock, const std::vector<proc::remote::Watched>& logs,
                     std::chrono::steady_clock::time_point output_read, std::chrono::steady_clock::time_point until)
{
  using std::chrono::milliseconds;
  constexpr milliseconds k_min_read_gap{250};
  auto rest = [&] { return std::chrono::duration_cast<milliseconds>(until - clock.now()); };
  if (const auto gap = std::chrono::duration_cast<milliseconds>(output_read + k_min_read_gap - clock.now());
      gap.count() > 0 && interrupt_signal() == 0) {
    clock.sleep_for(std::min(gap, std::max(rest(), milliseconds(0))));
  }
  proc::remote::wait_or_sleep(runner, clock, proc::remote::wait_for_growth_command(logs, rest()), until);
}

} // namespace

Result<FinalStatus> final_status(proc::Runner& runner, const std::string& job_id, Clock& clock)
{
  RV_TRY(v, slurm::final_state(runner, clock, job_id));
  return FinalStatus{v.state, v.exit_status, v.exit_signal, v.elapsed_s, job_id};
}

Result<FinalStatus> follow_job(proc::Runner& runner, Clock& clock, Output& output, const RequestRecord& r,
                               const JobRecord& first, std::size_t out_offset, std::size_t err_offset,
                               const NextSegment& on_next)
{
  JobRecord job = first;
  std::size_t out_off = out_offset, err_off = err_offset;
  // New bytes of both logs, a chunk at a time (#17: never a whole multi-GB log at once, in the
  // login node's batch files or here), until a read comes back short.
  auto flush = [&]() -> Result<void> {
    for (bool more = true; more;) {
      RV_TRY(outs, runner.run_batch({proc::remote::read_from_command(log_path(r, job, false), out_off),
                                     proc::remote::read_from_command(log_path(r, job, true), err_off)}));
      more = false;
      if (outs[0].ok()) {
        output.out(outs[0].out);
        out_off += outs[0].out.size();
        more = outs[0].out.size() >= proc::remote::k_log_chunk;
      }
      if (outs[1].ok()) {
        output.err(outs[1].out);
        err_off += outs[1].out.size();
        more = more || outs[1].out.size() >= proc::remote::k_log_chunk;
      }
      if (more && interrupt_signal() != 0) {
        break; // the caller's loop says why it stops
      }
    }
    return {};
  };
  // Squeue once a pause (1 s, 2 s, then every 3 s); between, rv waits on the login node for the
  // logs to grow, so new output shows within a look (0.2 s) and a round trip, not a pause.
  slurm::Backoff backoff(slurm::Backoff::following());
  auto next_poll = clock.now();
  while (true) {
    if (interrupt_signal() != 0) {
      return fail(ErrorCode::interrupted, fmt::format("stopped following; job {} keeps running", job.job_id),
                  fmt::format("`rv logs -f {}` follows it again, `rv stop {}` cancels it", r.id, r.id));
    }
    const auto read_before = out_off + err_off;
    if (auto f = flush(); !f) {
      return std::unexpected(f.error());
    }
    // When this read got output (else the clock's epoch: long past).
    const auto output_read = out_off + err_off != read_before ? clock.now() : std::chrono::steady_clock::time_point{};
    if (clock.now() >= next_poll) {
      RV_TRY(views, slurm::poll_jobs(runner, {job.job_id}, clock.epoch_seconds(), nullptr, {{job.job_id, r.name}}));
      auto it = views.find(job.job_id);
      if (it != views.end() && slurm::is_terminal(it->second.state)) {
        if (auto f = flush(); !f) {
          return std::unexpected(f.error());
        }
        RV_TRY(status, final_status(runner, job.job_id, clock));
        // A segment that resubmitted itself ends COMPLETED, status 0; anything else is final.
        auto next = status.state == slurm::JobState::completed && status.exit_status == 0
                        ? next_segment(runner, r, job.job_id)
                        : "";
        if (next.empty()) {
          return status;
        }
        spdlog::info("job {} resubmitted itself as job {} for the next checkpoint segment: following it", job.job_id,
                     next);
        if (on_next) {
          on_next(job.job_id, next);
        }
        job.job_id = next;
        out_off = err_off = 0;
        backoff.reset();
        continue;
      }
      next_poll = clock.now() + backoff.next();
    }
    wait_for_output(runner, clock, {{log_path(r, job, false), out_off}, {log_path(r, job, true), err_off}}, output_read,
                    next_poll);
  }
}

int exit_code_of(const FinalStatus& s, const std::string& job_id)
{
  switch (s.state) {
  case slurm::JobState::completed:
    return s.exit_status;
  case slurm::JobState::failed:
    spdlog::error("job {} FAILED with exit code {}{}", job_id, s.exit_status,
                  s.exit_signal ? fmt::format(" (signal {})", s.exit_signal) : "");
    return s.exit_status != 0 ? s.exit_status : (s.exit_signal ? 128 + s.exit_signal : 1);
  default:
    break;
  }
  spdlog::error("job {} ended {}", job_id, slurm::to_string(s.state));
  switch (s.state) {
  case slurm::JobState::timeout:
    return 124;
  case slurm::JobState::out_of_memory:
    return 137;
  case slurm::JobState::cancelled:
    return 130;
  default:
    break;
  }
  return 1; // NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE
}

} // namespace rv::app
