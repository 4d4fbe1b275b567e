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

// The wait on the login node that leads the next read's batch, until `until`: new output ends it
// early. After a read that got output it begins a quarter second after that read (at most four
// reads a second while a job prints), after one that got none at once (the first line shows as
// soon as it is written). None once `until` has passed or on an interrupt.
std::optional<proc::Command> wait_for_output(Clock& clock, const std::vector<proc::remote::Watched>& logs,
                                             std::chrono::steady_clock::time_point output_read,
                                             std::chrono::steady_clock::time_point until)
{
  using std::chrono::milliseconds;
  constexpr milliseconds k_min_read_gap{250};
  auto rest = [&] { return std::chrono::duration_cast<milliseconds>(until - clock.now()); };
  if (const auto gap = std::chrono::duration_cast<milliseconds>(output_read + k_min_read_gap - clock.now());
      gap.count() > 0 && interrupt_signal() == 0) {
    clock.sleep_for(std::min(gap, std::max(rest(), milliseconds(0))));
  }
  if (clock.now() >= until || interrupt_signal() != 0) {
    return std::nullopt;
  }
  return proc::remote::wait_for_growth_command(logs, rest());
}

} // namespace

Result<FinalStatus> final_status(proc::Runner& runner, const std::string& job_id, Clock& clock)
{
  RV_TRY(v, slurm::final_state(runner, clock, job_id));
  return FinalStatus{v.state, v.exit_status, v.exit_signal, v.elapsed_s, job_id};
}

Result<FinalStatus> follow_job(proc::Runner& runner, Clock& clock, Output& output, const RequestRecord& r,
                               const JobRecord& first, std::size_t out_offset, std::size_t err_offset,
                               const NextSegment& on_next, FollowStart start)
{
  JobRecord job = first;
  std::size_t out_off = out_offset, err_off = err_offset;
  // The pause's wait on the login node, run first in the next read's batch: the logs' growth ends
  // it and the new bytes are read at once, in the same round trip.
  std::optional<proc::Command> lead;
  std::chrono::steady_clock::time_point lead_until{};
  std::optional<AlongRead> along = std::move(start.along);
  // New bytes of both logs, a chunk at a time (#17: never a whole multi-GB log at once, in the
  // login node's batch files or here), until a read comes back short.
  auto flush = [&]() -> Result<void> {
    for (bool more = true; more;) {
      // [the read along, the wait, the .out read, the .err read]: the read along first, so that
      // the login node runs it while the job has not printed yet.
      std::vector<proc::Command> batch;
      if (along) {
        batch.push_back(along->cmd);
      }
      const bool led = lead.has_value();
      if (lead) {
        batch.push_back(std::move(*lead));
        lead.reset();
      }
      const std::size_t at = batch.size();
      batch.push_back(proc::remote::read_from_command(log_path(r, job, false), out_off));
      batch.push_back(proc::remote::read_from_command(log_path(r, job, true), err_off));
      auto got = runner.run_batch(batch);
      if (!got && led && got.error().code != ErrorCode::interrupted) {
        // The batch with the wait could not run: as a wait alone that could not run, the rest of
        // the pause is slept here, then the reads go alone (their failure ends the follow).
        spdlog::debug("the wait on the login node could not run ({}): sleeping here", got.error().message);
        proc::remote::sleep_until(clock, lead_until);
        continue;
      }
      if (!got) {
        return std::unexpected(std::move(got.error()));
      }
      const auto& outs = *got; // not moved out: GCC 12's -Wmaybe-uninitialized misread the move (unity build)
      if (outs.size() != batch.size()) {
        return fail(ErrorCode::parse, "unexpected reply to the log reads");
      }
      if (led && !outs[at - 1].ok()) {
        proc::remote::sleep_until(clock, lead_until); // the wait could not run (wait_or_sleep's rule); the reads count
      }
      if (along) {
        if (along->done) {
          along->done(outs.front());
        }
        along.reset();
      }
      more = false;
      if (outs[at].ok()) {
        output.out(outs[at].out);
        out_off += outs[at].out.size();
        more = outs[at].out.size() >= proc::remote::k_log_chunk;
      }
      if (outs[at + 1].ok()) {
        output.err(outs[at + 1].out);
        err_off += outs[at + 1].out.size();
        more = more || outs[at + 1].out.size() >= proc::remote::k_log_chunk;
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
  if (start.just_started) {
    // The race's squeue just saw it running: the first poll comes after the first pause, and the
    // first read waits for the job's first output.
    next_poll = clock.now() + backoff.next();
    lead = proc::remote::wait_for_growth_command(
        {{log_path(r, job, false), out_off}, {log_path(r, job, true), err_off}},
        std::chrono::duration_cast<std::chrono::milliseconds>(next_poll - clock.now()));
    lead_until = next_poll;
  }
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
    lead = wait_for_output(clock, {{log_path(r, job, false), out_off}, {log_path(r, job, true), err_off}}, output_read,
                           next_poll);
    lead_until = next_poll;
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
