// rv why, pure parts: what is ahead of a pending job, and the request a record was made with.

#include "app/why/why.hpp"

#include "slurm/gres.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/job_state.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace rv::app {
namespace {

// The GPUs a queued job holds or asks for: %b (per node) x nodes, by type.
std::vector<model::GpuGres> job_gpus(const slurm::SqueueJob& j)
{
  auto per_node = slurm::parse_tres_gpus(j.tres_per_node);
  if (!per_node) {
    return {};
  }
  for (auto& g : *per_node) {
    g.count *= std::max(1, j.node_count);
  }
  return *per_node;
}

// The GPUs of `gpus` that compete with a request for `type` ("" = untyped): the same type, or
// untyped on either side (an untyped request takes any type, an untyped job any GPU).
int competing(const std::vector<model::GpuGres>& gpus, const std::string& type)
{
  int n = 0;
  for (const auto& g : gpus) {
    if (type.empty() || g.type.empty() || g.type == type) {
      n += g.count;
    }
  }
  return n;
}

bool shares_partition(const slurm::SqueueJob& j, const std::vector<std::string>& mine)
{
  for (const auto& p : slurm::text::comma_list(j.partition)) {
    if (std::find(mine.begin(), mine.end(), p) != mine.end()) {
      return true;
    }
  }
  return false;
}

// Whether a pending job is in line to start: not held, not waiting for a dependency or a begin
// time, not stuck on a limit of its own.
bool in_line(const slurm::SqueueJob& j)
{
  const auto r = slurm::explain_reason(j.reason);
  using K = slurm::ReasonKind;
  return !r.hopeless && r.kind != K::held && r.kind != K::dependency && r.kind != K::begin_time && j.priority != 0;
}

// Whether `j` goes before `mine`: a higher priority, or the same and an earlier (lower) job id.
bool before(const slurm::SqueueJob& j, const slurm::SqueueJob& mine)
{
  if (j.priority != mine.priority) {
    return j.priority > mine.priority;
  }
  auto a = slurm::text::to_int(j.job_id), b = slurm::text::to_int(mine.job_id);
  return a && b ? *a < *b : j.job_id < mine.job_id;
}

AheadJob ahead_job(const slurm::SqueueJob& j, int gpus, bool running)
{
  AheadJob a{j.job_id, j.user, j.name, gpus, j.priority, "", j.reason};
  const auto& t = running ? j.end_time : j.start_time;
  if (t) {
    a.start_estimate = slurm::format_cluster_time(*t);
  }
  return a;
}

} // namespace

Ahead whats_ahead(const slurm::SqueueJob& mine, const std::vector<slurm::SqueueJob>& queue,
                  const std::vector<std::string>& partition_nodes)
{
  Ahead out;
  const auto mine_gpus = job_gpus(mine);
  out.gpu_type = mine_gpus.empty() ? "" : mine_gpus.front().type;
  out.gpus = slurm::total_gpus(mine_gpus);
  const auto parts = slurm::text::comma_list(mine.partition);
  out.partition = mine.partition;
  const std::set<std::string> nodes(partition_nodes.begin(), partition_nodes.end());
  std::vector<std::pair<slurm::SqueueJob, int>> pending;
  for (const auto& j : queue) {
    if (j.job_id == mine.job_id) {
      continue;
    }
    const auto st = slurm::parse_job_state(j.state);
    const int gpus = competing(job_gpus(j), out.gpu_type);
    if (gpus == 0) {
      continue;
    }
    if (st == slurm::JobState::pending) {
      if (shares_partition(j, parts) && in_line(j) && before(j, mine)) {
        pending.emplace_back(j, gpus);
      }
      continue;
    }
    if (!slurm::is_started(st) || slurm::is_terminal(st)) {
      continue;
    }
    bool here = false;
    if (nodes.empty()) {
      here = shares_partition(j, parts);
    } else if (auto hosts = slurm::expand_hostlist(j.nodes)) {
      here = std::any_of(hosts->begin(), hosts->end(), [&](const std::string& h) { return nodes.contains(h); });
    }
    if (!here) {
      continue;
    }
    ++out.running_jobs;
    out.running_gpus += gpus;
    if (j.end_time && (!out.first_end || slurm::format_cluster_time(*j.end_time) < out.first_end->start_estimate)) {
      out.first_end = ahead_job(j, gpus, true);
    }
  }
  std::stable_sort(pending.begin(), pending.end(),
                   [](const auto& a, const auto& b) { return before(a.first, b.first); });
  out.pending_jobs = static_cast<int>(pending.size());
  for (const auto& [j, gpus] : pending) {
    out.pending_gpus += gpus;
    if (out.pending.size() < 5) {
      out.pending.push_back(ahead_job(j, gpus, false));
    }
  }
  return out;
}

Result<model::JobRequest> recorded_request(const RequestRecord& rec)
{
  model::JobRequest r;
  try {
    if (auto stored = request_options_from_json(rec.options)) {
      return *stored;
    }
    // An older record: what its plan's strategies say.
    const auto strategies = rec.plan.value("strategies", nlohmann::json::array());
    if (strategies.empty()) {
      return fail(ErrorCode::usage, fmt::format("request {} has no stored plan to re-plan from", rec.id));
    }
    const auto& s = strategies.front();
    r.gpus = s.value("nodes", 1) * s.value("gpus_per_node", 1);
    r.time_s = s.value("total_time_s", std::int64_t{3600});
    r.account = s.value("account", "");
    r.qos = s.value("qos", "");
    for (const auto& k : strategies) {
      r.allow_checkpoint = r.allow_checkpoint || k.value("kind", "") == "checkpoint";
      r.allow_time_min = r.allow_time_min || k.value("kind", "") == "time-min";
      r.allow_mig = r.allow_mig || k.value("mig_like", false);
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::parse, fmt::format("request {}: malformed options: {}", rec.id, e.what()));
  }
}

} // namespace rv::app
