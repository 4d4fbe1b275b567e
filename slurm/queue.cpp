#include "slurm/queue.hpp"

#include "slurm/cluster_time.hpp"
#include "slurm/gres.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/jobs.hpp"
#include "slurm/squeue.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

namespace rv::slurm {

std::vector<proc::Command> queue_commands()
{
  return {command({"date", "+%s %z"}), command({"env", "SLURM_TIME_FORMAT=standard", "squeue", "-h", "-t", "PD,R,CG",
                                                "-o", std::string(queue_format)})};
}

model::QueueSnapshot parse_queue(std::string_view date_out, std::string_view squeue_out)
{
  model::QueueSnapshot q;
  auto words = text::split_ws(date_out);
  auto now = words.size() >= 2 ? text::to_int(words[0]) : std::nullopt;
  auto offset = words.size() >= 2 ? parse_utc_offset(words[1]) : fail(ErrorCode::parse, "no offset");
  if (!now || !offset) {
    q.notes.push_back(
        fmt::format("the cluster's clock was not readable ('{}'): no queue model", text::first_line(date_out)));
    return q;
  }
  q.now_epoch = *now;
  auto rows = parse_squeue(squeue_out, queue_format);
  if (!rows) {
    q.notes.push_back(fmt::format("squeue was not readable: {}: no queue model", rows.error().message));
    return q;
  }
  q.known = true;
  auto in_s = [&](const std::optional<ClusterTime>& t) -> std::optional<std::int64_t> {
    if (!t) {
      return std::nullopt;
    }
    return to_unix_seconds(*t, *offset) - q.now_epoch;
  };
  for (const auto& r : *rows) {
    model::QueuedJob j;
    j.running = r.state == "RUNNING" || r.state == "COMPLETING";
    if (!j.running && r.state != "PENDING") {
      continue;
    }
    j.id = r.job_id;
    j.name = r.name;
    j.partition = r.partition;
    j.priority = r.priority;
    j.reason = r.reason;
    if (!r.nodes.empty()) {
      auto nodes = expand_hostlist(r.nodes);
      if (nodes) {
        j.nodes = std::move(*nodes);
      } else {
        q.notes.push_back(fmt::format("job {}: nodes '{}' not read: {}", r.job_id, r.nodes, nodes.error().message));
      }
    }
    if (!r.tres_per_node.empty()) {
      auto gpus = parse_tres_gpus(r.tres_per_node);
      if (gpus) {
        j.gpus_per_node = std::move(*gpus);
        j.gpus_known = true;
      } else {
        q.notes.push_back(
            fmt::format("job {}: GPUs '{}' not read: {}", r.job_id, r.tres_per_node, gpus.error().message));
      }
    }
    if (j.running) {
      j.start_in_s = in_s(r.start_time); // when it started (negative)
      j.end_in_s = in_s(r.end_time);
    } else {
      j.start_in_s = in_s(r.start_time);
      j.end_in_s = j.start_in_s ? in_s(r.end_time) : std::nullopt;
    }
    q.jobs.push_back(std::move(j));
  }
  return q;
}

model::QueueSnapshot parse_queue(std::span<const proc::Outcome> answers)
{
  if (answers.size() != 2) {
    model::QueueSnapshot q;
    q.notes.push_back(fmt::format("{} answers to the 2 queue reads: no queue model", answers.size()));
    return q;
  }
  const auto& date = answers[0];
  const auto& squeue = answers[1];
  if (!date.ok() || !squeue.ok()) {
    model::QueueSnapshot q;
    const auto& bad = date.ok() ? squeue : date;
    q.notes.push_back(fmt::format("{} failed (exit {}): {}: no queue model", date.ok() ? "squeue" : "date",
                                  bad.status(), text::first_line(bad.err)));
    return q;
  }
  return parse_queue(date.out, squeue.out);
}

} // namespace rv::slurm
