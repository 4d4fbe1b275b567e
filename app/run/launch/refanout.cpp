#include "app/run/launch/refanout.hpp"

#include "core/process/remote_files.hpp"
#include "core/store/json_fields.hpp"
#include "core/text.hpp"
#include "slurm/gpu_faults.hpp"
#include "slurm/hostlist.hpp"
#include "templates/preflight.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace rv::app {

RefanoutDecision decide_refanout(const EndedWinner& winner, const std::vector<std::string>& excluded, int rounds_done,
                                 int max_rounds)
{
  RefanoutDecision d;
  if (winner.state != slurm::JobState::failed) {
    return d;
  }
  std::vector<std::string> nodes;
  if (auto expanded = slurm::expand_hostlist(winner.node_list)) {
    nodes = std::move(*expanded);
  }
  if (winner.exit_status == slurm::k_preflight_exit) {
    if (text::trim(winner.preflight).empty()) {
      return d; // no verdict: the command ran and exited 96 itself; never run it again (N2)
    }
    d.step.kind = "preflight";
    if (auto f = slurm::find_preflight_failure(winner.preflight); f && f->whole_request) {
      d.step.node = f->node; // the image or the container's mounts: every node would fail it the same way
      d.step.reason = f->reason;
      d.why_not = "every node would fail it (the container image or its mounts), so it is not raced again";
      return d;
    } else if (f) {
      d.exclude = {f->node};
      d.step.reason = f->reason;
    } else {
      d.exclude = nodes; // the verdict is unreadable: every node of the job is suspect
      d.step.reason = "exit 96 (the preflight's reason line could not be read)";
    }
  } else if (winner.run_time_s >= 0 && winner.run_time_s <= k_hardware_retry_window_s) {
    auto fault = slurm::find_gpu_fault(winner.log_tail);
    if (fault.empty()) {
      return d;
    }
    d.step.kind = "gpu_fault";
    d.step.reason = fault;
    d.exclude = nodes;
  } else {
    return d;
  }
  std::erase_if(d.exclude, [&](const std::string& n) {
    return n.empty() || std::find(excluded.begin(), excluded.end(), n) != excluded.end();
  });
  d.step.node = fmt::format("{}", fmt::join(d.exclude, ","));
  if (d.exclude.empty()) {
    d.step.node = winner.node_list;
    d.why_not = fmt::format("no node left to exclude (the job ran on {})", winner.node_list);
  } else if (rounds_done >= max_rounds) {
    d.why_not = fmt::format("the re-fan-out limit is reached ({} round{}; config refanout_max)", max_rounds,
                            max_rounds == 1 ? "" : "s");
  } else {
    d.retry = true;
  }
  return d;
}

nlohmann::json refanout_json(const std::vector<RefanoutStep>& history, const std::vector<std::string>& excluded,
                             const std::string& next_request)
{
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : history) {
    steps.push_back(
        {{"request", s.request_id}, {"job_id", s.job_id}, {"node", s.node}, {"kind", s.kind}, {"reason", s.reason}});
  }
  return {{"history", steps}, {"excluded", excluded}, {"next_request", next_request}};
}

std::vector<RefanoutStep> refanout_history(const nlohmann::json& refanout)
{
  std::vector<RefanoutStep> history;
  if (!refanout.is_object()) {
    return history;
  }
  using store::text_field;
  for (const auto& s : store::array_field(refanout, "history")) {
    if (s.is_object()) {
      history.push_back({text_field(s, "request"), text_field(s, "job_id"), text_field(s, "node"),
                         text_field(s, "kind"), text_field(s, "reason")});
    }
  }
  return history;
}

std::vector<std::string> refanout_lines(const nlohmann::json& refanout)
{
  std::vector<std::string> lines;
  if (!refanout.is_object()) {
    return lines;
  }
  using store::text_field;
  for (const auto& s : store::array_field(refanout, "history")) {
    if (!s.is_object()) {
      continue;
    }
    const auto kind = text_field(s, "kind");
    lines.push_back(fmt::format("{} failed {} ({}) in request {}, job {}", text_field(s, "node", "?"),
                                kind == "preflight" ? "the preflight" : "with a GPU fault", text_field(s, "reason"),
                                text_field(s, "request", "?"), text_field(s, "job_id", "?")));
  }
  if (auto next = text_field(refanout, "next_request"); !next.empty()) {
    lines.push_back("re-fanned out as request " + next);
  }
  return lines;
}

std::string winner_log_tail(proc::Runner& runner, const RequestRecord& rec, const JobRecord& job)
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
  return o ? o->out : std::string();
}

std::string winner_preflight_verdict(proc::Runner& runner, const RequestRecord& rec, const JobRecord& job)
{
  if (rec.remote_root.empty() || job.job_id.empty()) {
    return {};
  }
  auto o =
      runner.run(proc::remote::read_command(templates::preflight_verdict_path(rec.remote_root, rec.id, job.job_id)));
  return o && o->ok() ? o->out.substr(0, 4096) : std::string();
}

} // namespace rv::app
