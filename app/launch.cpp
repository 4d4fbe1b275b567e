#include "app/launch.hpp"

#include "app/follow.hpp"
#include "app/race.hpp"
#include "app/reap.hpp"
#include "app/submit.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/process/shell.hpp"
#include "core/store/json_bytes.hpp"
#include "slurm/gpu_faults.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/monitor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

namespace rv::app {
namespace {

// The GPU-fault signature in the tail of the winner's stderr logs (per-node logs too), or "".
std::string gpu_fault_in_logs(proc::Runner& runner, const RequestRecord& rec, const JobRecord& job)
{
  proc::Command c;
  c.argv = {"sh",
            "-c",
            "tail -q -n 100 \"$1\" \"$2\".node*.err 2>/dev/null; true",
            "rv-fault",
            log_path(rec, job, true),
            fmt::format("{}/{}-{}", rec.log_dir, rec.name, job.job_id)};
  c.timeout = std::chrono::seconds(30);
  auto o = runner.run(c);
  return o ? slurm::find_gpu_fault(o->out) : std::string();
}

} // namespace

std::string submitted_summary(const RequestRecord& rec, const strategy::Plan& plan)
{
  // The best submitted strategy: the plan is in rank order, and so are the record's jobs.
  const model::Strategy* best = nullptr;
  for (const auto& j : rec.jobs) {
    if (j.job_id.empty()) {
      continue;
    }
    for (const auto& s : plan.strategies) {
      if (s.id == j.strategy_id) {
        best = &s;
        break;
      }
    }
    if (best) {
      break;
    }
  }
  std::string out;
  if (best) {
    const auto wait = !best->est_wait_s        ? std::string("an unknown time")
                      : *best->est_wait_s <= 0 ? std::string("now")
                                               : "in ~" + format_human_duration(*best->est_wait_s);
    out += fmt::format("best estimate: {} ({}) starts {}, {:.1f} SU\n", best->id, best->label, wait, best->est_su);
  }
  out += fmt::format("next: rv logs -f {}   (wait for the winner and follow it)\n"
                     "      rv ps            (where each strategy stands)\n"
                     "      rv stop {}   (cancel every job of it)\n",
                     rec.id, rec.id);
  return out;
}

Result<int> launch_run(Env& env, const PlanRun& planned, const std::vector<std::string>& command,
                       const std::string& workdir, bool follow, const RunExtras& extras)
{
  auto& runner = env.cluster;
  auto& store = env.requests;
  // One word is a shell command line; several words are an argv, quoted so they arrive exactly.
  const std::string line = command.size() == 1 ? command.front() : proc::shell_join(command);
  PlanRun current = planned;
  for (int attempt = 0;; ++attempt) {
    // A retry is a new request (new id) that runs from the same snapshot.
    RunExtras this_try = extras;
    if (attempt > 0) {
      this_try.request_id.clear();
    }
    RV_TRY(launched, submit_request(env, current, line, workdir, "run", this_try));
    if (!follow) {
      if (env.json) {
        env.output.out(store::dump_for_display(to_json(launched.rec)) + "\n");
      } else {
        env.output.out(submitted_summary(launched.rec, current.plan));
      }
      return 0;
    }
    RV_TRY(winner, race_request(env, launched));
    auto& rec = launched.rec;
    auto status = follow_job(runner, env.clock, env.output, rec, winner, 0, 0,
                             [&](const std::string& prev, const std::string& next) {
                               record_next_segment(store, rec, prev, next);
                               winner.job_id = next;
                             });
    if (!status) {
      return std::unexpected(status.error());
    }
    rec.state = ended_state(status->state); // a FAILED winner is a failed request, not "done"
    for (auto& j : rec.jobs) {
      if (j.strategy_id == rec.winner) {
        j.state = status->state;
      }
    }
    save(store, rec);
    remove_secrets(runner, store, {&rec}, true);
    // Hardware retry: failed within minutes of starting (queue time does not count), with a
    // known GPU-fault signature: plan again without the node(s), at most twice.
    if (status->state == "FAILED" && attempt < k_hardware_retries && status->run_time_s >= 0 &&
        status->run_time_s <= k_hardware_retry_window_s) {
      if (auto fault = gpu_fault_in_logs(runner, rec, winner); !fault.empty()) {
        auto nodes = slurm::expand_hostlist(winner.node_list);
        if (nodes && !nodes->empty()) {
          spdlog::warn("job {} failed after {} s with a GPU fault ('{}') on {}: retrying without {} ({}/{})",
                       winner.job_id, status->run_time_s, fault, winner.node_list, winner.node_list, attempt + 1,
                       k_hardware_retries);
          auto request = current.request;
          request.exclude_nodes.insert(request.exclude_nodes.end(), nodes->begin(), nodes->end());
          RV_TRY(replanned, make_plan(env, request, current.options));
          current = std::move(replanned);
          continue;
        }
      }
    }
    return exit_code_of(*status, status->job_id);
  }
}

Result<int> launch_up(Env& env, const PlanRun& planned, const std::string& command)
{
  auto& runner = env.cluster;
  auto& store = env.requests;
  // The allocation holds its nodes with a sleep; the shell or CMD joins it with srun --overlap.
  // The record shows what the user asked for; the job itself only holds the nodes.
  RV_TRY(launched, submit_request(env, planned, "exec sleep 2147483647", "", "up", {},
                                  command.empty() ? "(interactive shell)" : command));
  RV_TRY(winner, race_request(env, launched));
  if (env.json) {
    env.output.out(store::dump_for_display(to_json(launched.rec)) + "\n");
    return 0; // the allocation stays: `rv stop` releases it
  }
  std::vector<std::string> srun = {"srun", "--jobid=" + winner.job_id, "--overlap", "--nodes=1", "--ntasks=1"};
  // The shell on the node starts from srun's environment on the login node: it reads the
  // secrets itself (file name in $0, never the values in argv).
  const auto& secrets_file = launched.rec.secrets_file;
  // Fail closed: a request with secrets never runs without them (#15 defect 9).
  const std::string load_secrets = secrets_file.empty()
                                       ? ""
                                       : "[ -r \"$0\" ] || { echo \"rv: the secrets file $0 is missing or unreadable; "
                                         "nothing was run\" >&2; exit 1; }; . \"$0\" || exit 1; ";
  Result<int> status = 0;
  if (!command.empty()) {
    proc::Command c;
    c.argv = srun;
    if (secrets_file.empty()) {
      c.argv.insert(c.argv.end(), {"bash", "-c", command});
    } else {
      c.argv.insert(c.argv.end(), {"bash", "-c", load_secrets + "eval \"$1\"", secrets_file, command});
    }
    c.timeout = std::chrono::milliseconds(0);
    c.on_stdout = [&](std::string_view s) { env.output.out(s); };
    c.on_stderr = [&](std::string_view s) { env.output.err(s); };
    auto o = runner.run(c);
    status = o ? Result<int>(o->status()) : Result<int>(std::unexpected(o.error()));
  } else {
    if (secrets_file.empty()) {
      srun.insert(srun.end(), {"--pty", "bash", "-l"});
    } else {
      srun.insert(srun.end(), {"--pty", "bash", "-c", load_secrets + "exec bash -l", secrets_file});
    }
    status = runner.run_interactive(srun);
  }
  // Release the allocation whatever happened to the shell or the command.
  clear_interrupt();
  if (auto c = slurm::cancel_jobs(runner, {winner.job_id}, launched.rec.name); !c) {
    // Still held: the record stays live (and keeps its secrets file) so that `rv ps` lists it and
    // `rv stop` releases it; recorded as released, nothing ever would (#15 campaign).
    spdlog::warn("could not release allocation {}: {}; `rv stop {}` releases it", winner.job_id, c.error().message,
                 launched.rec.id);
    return status;
  }
  for (auto& j : launched.rec.jobs) {
    if (j.job_id == winner.job_id) {
      j.state = "CANCELLED"; // released by rv: the allocation is gone, so `rv ps` no longer lists it
    }
  }
  launched.rec.state = "done";
  save(store, launched.rec);
  remove_secrets(runner, store, {&launched.rec}, true);
  return status;
}

} // namespace rv::app
