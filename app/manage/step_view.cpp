#include "app/manage/step_view.hpp"

#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>

namespace rv::app {
namespace {

// Settles a step Slurm no longer lists: its status file says how it ended.
Result<void> settle(Env& env, const std::string& id, StepRecord& s)
{
  RV_TRY(code, read_step_status(env.cluster, s));
  s.state = code ? (*code == 0 ? "done" : "failed") : "ended";
  s.exit_code = code;
  return end_step(env.requests, id, s.n, s.state, code);
}

} // namespace

Result<std::vector<StepRow>> list_steps(Env& env, const std::string& id)
{
  RV_TRY(rec, env.requests.read(id));
  std::vector<StepRow> rows;
  std::map<std::string, std::vector<slurm::JobStep>> live; // by job id, asked once each
  for (auto& s : steps_of(rec)) {
    StepRow row{s, {}, 0};
    if (s.state == "running") {
      if (!live.contains(s.job_id)) {
        RV_TRY(steps, job_steps(env.cluster, s.job_id));
        live[s.job_id] = std::move(steps);
      }
      if (const auto* l = live_step(s, live[s.job_id])) {
        row.slurm_step = l->job_id + "." + l->step_id;
        row.elapsed_s = l->elapsed_s;
      } else {
        RV_TRY_VOID(settle(env, id, row.step));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> step_lines(const std::vector<StepRow>& rows)
{
  std::vector<std::string> lines;
  for (const auto& r : rows) {
    std::string where = r.slurm_step.empty() ? (r.step.exit_code ? fmt::format("exit {}", *r.step.exit_code) : "-")
                                             : fmt::format("{} {}", r.slurm_step, format_human_duration(r.elapsed_s));
    auto cmd = r.step.command.size() > 50 ? r.step.command.substr(0, 47) + "..." : r.step.command;
    lines.push_back(fmt::format("step-{:<4} {:<10} {:<22} {:<3} {}", r.step.n, r.step.state, where,
                                r.step.nodes > 1 ? fmt::format("x{}", r.step.nodes) : "", cmd));
  }
  return lines;
}

Result<bool> stop_step(Env& env, const std::string& id, int n)
{
  RV_TRY(step, find_step(env.requests, id, n));
  RV_TRY(cancelled, cancel_step(env.cluster, step));
  if (cancelled) {
    RV_TRY_VOID(end_step(env.requests, id, n, "cancelled", std::nullopt));
    return true;
  }
  if (step.state == "running") {
    RV_TRY_VOID(settle(env, id, step));
  }
  return false;
}

Result<int> show_step_logs(Env& env, const std::string& id, int n, const LogsRequest& req)
{
  RV_TRY(step, find_step(env.requests, id, n));
  if (req.node >= step.nodes) {
    return fail(ErrorCode::usage, fmt::format("--node {}: {} ran on {} node(s)", req.node, step_ref(id, n), step.nodes),
                step.nodes == 1 ? fmt::format("it has one log: rv logs {}", step_ref(id, n))
                                : fmt::format("give --node 0 to {}", step.nodes - 1));
  }
  const auto path = step_log_path(step, req.err, std::max(0, req.node));
  const auto print = [&](std::string_view s) {
    if (req.err) {
      env.output.err(s);
    } else {
      env.output.out(s);
    }
  };
  const auto cannot_read = [&](const std::string& err) {
    return fail(ErrorCode::io,
                fmt::format("cannot read {} on {}: {}", path, env.cluster.where(), text::shorten(text::trim(err), 200)),
                "the log appears once the step starts; rv ps " + id + " shows its steps");
  };
  if (req.tail >= 0 && !req.follow) {
    auto c = proc::remote::last_lines_command(path, req.tail);
    c.on_stdout = print;
    RV_TRY(o, env.cluster.run(c));
    return o.ok() ? Result<int>(0) : cannot_read(o.err);
  }
  // The whole log a chunk at a time; with -f, again each second until Slurm no longer lists the step.
  std::size_t offset = 0;
  bool last_round = !req.follow;
  while (true) {
    RV_TRY(o, env.cluster.run(proc::remote::read_from_command(path, offset)));
    if (!o.ok() && !req.follow) {
      return cannot_read(o.err);
    }
    if (o.ok()) {
      print(o.out);
      offset += o.out.size();
      if (o.out.size() == proc::remote::k_log_chunk) {
        continue;
      }
    }
    if (last_round) {
      break;
    }
    if (interrupt_signal() != 0) {
      return fail(ErrorCode::interrupted, fmt::format("stopped following {}; it goes on", step_ref(id, n)));
    }
    RV_TRY(live, job_steps(env.cluster, step.job_id));
    if (!live_step(step, live)) {
      last_round = true; // read what it wrote last, then its status
      continue;
    }
    env.clock.sleep_for(std::chrono::seconds(1));
  }
  if (!req.follow) {
    return 0;
  }
  RV_TRY(rows, list_steps(env, id));
  for (const auto& r : rows) {
    if (r.step.n == n) {
      return r.step.exit_code.value_or(1);
    }
  }
  return 1;
}

} // namespace rv::app
