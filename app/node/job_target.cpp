#include "app/node/job_target.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/job_state.hpp"
#include "slurm/jobs.hpp"
#include "slurm/monitor.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::app {
namespace {

bool running(const std::map<std::string, slurm::JobView>& views, const std::string& id)
{
  auto v = views.find(id);
  return v != views.end() && v->second.state == slurm::JobState::running;
}

} // namespace

Result<RunningPick> pick_running(const std::vector<RequestRecord>& candidates,
                                 const std::map<std::string, slurm::JobView>& views, bool named)
{
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& r = candidates[i];
    if (const auto* w = r.winner_job(); w != nullptr && running(views, w->job_id)) {
      return RunningPick{i, w->job_id};
    }
    for (const auto& j : r.jobs) {
      if (!j.job_id.empty() && running(views, j.job_id)) {
        return RunningPick{i, j.job_id};
      }
    }
  }
  if (named && !candidates.empty()) {
    const auto& r = candidates.front();
    std::vector<std::string> seen;
    for (const auto& j : r.jobs) {
      if (auto v = views.find(j.job_id); v != views.end()) {
        seen.push_back(fmt::format("job {} {}", j.job_id, slurm::to_string(v->second.state)));
      }
    }
    return fail(ErrorCode::usage,
                fmt::format("request {} has no running job{}", r.id,
                            seen.empty() ? std::string() : fmt::format(" ({})", fmt::join(seen, ", "))),
                "rv ps shows its state; a pending request can be waited for with rv logs -f " + r.id);
  }
  return fail(ErrorCode::usage, "no request of yours has a running job",
              "rv ps lists your requests; rv up -g 1 --time 1h starts an allocation");
}

std::string node_address(std::string_view text)
{
  auto records = slurm::parse_records(text);
  if (!records || records->empty()) {
    return {};
  }
  return records->front().value("NodeAddr");
}

Result<NodeTarget> running_target(Env& env, const std::string& key, int node_index)
{
  RV_TRY(candidates, requests_for_key(env, key, Unnamed::unfinished));
  std::vector<std::string> ids;
  std::map<std::string, std::string> names;
  for (const auto& r : candidates) {
    for (const auto& j : r.jobs) {
      if (!j.job_id.empty()) {
        ids.push_back(j.job_id);
        names[j.job_id] = r.name;
      }
    }
  }
  std::map<std::string, slurm::JobView> views;
  if (!ids.empty()) {
    RV_TRY(polled, slurm::poll_jobs(env.cluster, ids, env.clock.epoch_seconds(), nullptr, names));
    views = std::move(polled);
  }
  RV_TRY(pick, pick_running(candidates, views, !key.empty()));
  const auto& r = candidates[pick.request];
  NodeTarget t{r.id, pick.job_id, r.name, {}, node_index, {}, {}, r.workdir};
  RV_TRY(hosts, slurm::expand_hostlist(views[pick.job_id].nodes));
  if (hosts.empty()) {
    return fail(ErrorCode::generic, fmt::format("Slurm names no node for running job {}", pick.job_id));
  }
  if (node_index < 0 || node_index >= static_cast<int>(hosts.size())) {
    return fail(ErrorCode::usage,
                fmt::format("--node {}: job {} has {} node(s) ({})", node_index, pick.job_id, hosts.size(),
                            slurm::compress_hostlist(hosts)),
                fmt::format("give --node 0 to {}", hosts.size() - 1));
  }
  t.nodes = hosts;
  t.node = hosts[static_cast<std::size_t>(node_index)];
  proc::Command show;
  show.argv = slurm::show_node_argv(t.node);
  show.timeout = std::chrono::seconds(30);
  RV_TRY(shown, env.cluster.run(show));
  t.address = shown.ok() ? node_address(shown.out) : std::string();
  if (t.address.empty()) {
    t.address = t.node;
  }
  return t;
}

Result<slurm::JobView> job_now(Env& env, const NodeTarget& target)
{
  RV_TRY(views, slurm::poll_jobs(env.cluster, {target.job_id}, env.clock.epoch_seconds(), nullptr,
                                 {{target.job_id, target.job_name}}));
  auto v = views.find(target.job_id);
  return v == views.end() ? slurm::JobView{} : v->second;
}

} // namespace rv::app
