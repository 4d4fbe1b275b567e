#include "app/manage/cluster_status.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "app/run/plan/planning.hpp"
#include "app/run/show/status_view.hpp"
#include "core/container.hpp"
#include "core/printable.hpp"
#include "core/text.hpp"
#include "slurm/discover.hpp"
#include "slurm/gres.hpp"
#include "slurm/jobs.hpp"
#include "slurm/pending_reason.hpp"
#include "slurm/sacct.hpp"
#include "slurm/squeue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace rv::app {
namespace {

// Where each extra probe sits after discovery's.
enum Extra : std::size_t { squeue_at, sshare_at, assoc_at, sacct_at, quota_at };

// "sshare: exit 1: <first line of stderr>", for the warnings.
std::string failure(std::string_view what, const proc::Outcome& o)
{
  auto err = text::trim(o.err);
  auto first = err.substr(0, err.find('\n'));
  return fmt::format("{}: exit {}{}", what, o.status(), first.empty() ? "" : ": " + std::string(first));
}

int count_of(const std::vector<model::GpuGres>& gpus, const std::string& type)
{
  int n = 0;
  for (const auto& g : gpus) {
    if (g.type == type) {
      n += g.count;
    }
  }
  return n;
}

// Adds `node`'s GPUs of each type to `into` (keyed by type).
void add_node(std::map<std::string, GpuAvailability>& into, const std::string& partition, const model::Node& node)
{
  std::map<std::string, int> per_type;
  for (const auto& g : node.gpus) {
    per_type[g.type] += g.count;
  }
  for (const auto& [type, count] : per_type) {
    auto& a = into[type];
    a.partition = partition;
    a.type = type;
    a.total += count;
    ++a.nodes;
    if (!node.usable) {
      a.unavailable += count;
      ++a.unavailable_nodes;
    } else if (node.gpus_used_known) {
      a.idle += std::max(0, count - count_of(node.gpus_used, type));
    } else if (node.state == "idle") {
      a.idle += count;
    }
  }
}

void availability(const model::Cluster& cluster, ClusterStatus& s)
{
  std::map<std::string, std::map<std::string, GpuAvailability>> by_partition;
  std::map<std::string, GpuAvailability> by_type;
  for (const auto& node : cluster.nodes) {
    if (node.gpus.empty()) {
      continue;
    }
    add_node(by_type, "", node); // once per node, whatever its partitions
    for (const auto& p : node.partitions) {
      add_node(by_partition[p], p, node);
    }
  }
  for (auto& [p, types] : by_partition) {
    for (auto& [t, a] : types) {
      s.by_partition.push_back(a);
    }
  }
  for (auto& [t, a] : by_type) {
    s.by_type.push_back(a);
  }
}

void active_jobs(const std::vector<RequestRecord>& requests, const std::vector<slurm::SqueueJob>& rows,
                 ClusterStatus& s)
{
  std::map<std::string, const slurm::SqueueJob*> by_id;
  for (const auto& r : rows) {
    by_id[r.job_id] = &r;
  }
  for (const auto& r : requests) {
    if (is_final_state(r.state) || request_finished(r)) {
      continue; // ended, or ended as far as the record knows (a job id Slurm reuses is not ours)
    }
    for (const auto& j : r.jobs) {
      auto row = by_id.find(j.job_id);
      if (j.job_id.empty() || row == by_id.end()) {
        continue; // refused, or gone from the queue
      }
      ActiveJob a{r.id, j};
      a.job.state = slurm::parse_job_state(row->second->state);
      a.job.reason = row->second->reason;
      a.job.node_list = a.job.state == slurm::JobState::pending ? "" : row->second->nodes;
      a.job.start_estimate = a.job.state == slurm::JobState::pending && row->second->start_time
                                 ? slurm::format_cluster_time(*row->second->start_time)
                                 : "";
      a.job.elapsed_s = row->second->elapsed_s;
      s.jobs.push_back(std::move(a));
    }
  }
}

// SU of the accounting records: their billing (AllocTRES, Slurm's TRESBillingWeights applied;
// the CPU count, Slurm's default billing, when there is none) x hours x the site's rate.
void spent(const std::vector<slurm::SacctJob>& jobs, ClusterStatus& s)
{
  for (const auto& j : jobs) {
    auto tres = slurm::parse_tres_map(j.alloc_tres);
    auto b = tres.find("billing");
    if (b == tres.end()) {
      b = tres.find("cpu");
    }
    double billing = b == tres.end() ? 0 : std::strtod(b->second.c_str(), nullptr);
    s.su_30d += billing * static_cast<double>(j.elapsed_s) / 3600.0 * s.su_per_billing_hour;
    ++s.jobs_30d;
  }
}

} // namespace

std::vector<proc::Command> status_commands(const std::string& user, const std::string& quota_command)
{
  auto cmds = slurm::discovery_commands({user, {}});
  cmds.push_back(slurm::patient_command(slurm::user_jobs_argv(user)));
  cmds.push_back(slurm::patient_command(slurm::sshare_argv()));
  cmds.push_back(slurm::patient_command(slurm::assoc_mgr_argv(user)));
  cmds.push_back(slurm::patient_command(slurm::recent_jobs_argv(user)));
  if (!quota_command.empty()) {
    cmds.push_back(slurm::patient_command({"sh", "-c", quota_command}));
  }
  return cmds;
}

Result<ClusterStatus> parse_status(const std::vector<proc::Outcome>& outcomes,
                                   const std::vector<RequestRecord>& requests, bool with_quota,
                                   double su_per_billing_hour)
{
  // Discovery's probes come first: 6 of them, 9 with a user (its sacctmgr probes).
  const std::size_t extras = quota_at + (with_quota ? 1 : 0);
  const std::size_t n = outcomes.size() >= extras ? outcomes.size() - extras : 0;
  if (n != slurm::discovery_commands({}).size() && n != slurm::discovery_commands({"user", {}}).size()) {
    return fail(ErrorCode::parse, fmt::format("rv status: {} outcomes for its batch", outcomes.size()));
  }
  ClusterStatus s;
  s.su_per_billing_hour = su_per_billing_hour;
  RV_TRY(cluster, slurm::parse_discovery({outcomes.begin(), outcomes.begin() + static_cast<std::ptrdiff_t>(n)}));
  availability(cluster, s);
  s.cluster = cluster.config.cluster_name;
  s.slurm_version = cluster.config.slurm_version;
  s.containers = cluster.containers;
  s.warnings = cluster.warnings;
  const auto& at = [&](Extra e) -> const proc::Outcome& { return outcomes[n + e]; };
  if (at(squeue_at).ok()) {
    RV_TRY(rows, slurm::parse_squeue(at(squeue_at).out));
    active_jobs(requests, rows, s);
  } else {
    s.warnings.push_back(failure("squeue", at(squeue_at)));
  }
  if (auto rows =
          at(sshare_at).ok() ? slurm::parse_sshare(at(sshare_at).out) : Result<std::vector<slurm::SshareRow>>{}) {
    for (const auto& r : *rows) {
      if (!r.user.empty()) {
        s.fairshare.push_back(r);
      }
    }
  }
  if (!at(sshare_at).ok()) {
    s.warnings.push_back(failure("sshare", at(sshare_at)));
  }
  if (at(assoc_at).ok()) {
    RV_TRY(assocs, slurm::parse_assoc_mgr(at(assoc_at).out));
    for (const auto& a : assocs) {
      for (const auto& l : a.limits) {
        s.limits.push_back({a.account, a.user, a.partition, l});
      }
    }
  } else {
    s.warnings.push_back(failure("scontrol show assoc_mgr", at(assoc_at)));
  }
  if (at(sacct_at).ok()) {
    RV_TRY(jobs, slurm::parse_sacct(at(sacct_at).out));
    spent(jobs, s);
  } else {
    s.warnings.push_back(failure("sacct", at(sacct_at)));
  }
  if (with_quota) {
    const auto& q = at(quota_at);
    s.quota = q.ok() ? q.out : q.out + q.err;
    if (!q.ok()) {
      s.warnings.push_back(failure("the profile's quota_command", q));
    }
  }
  return s;
}

Result<ClusterStatus> cluster_status(Env& env)
{
  RV_TRY(profile, load_profile(env.settings.profile));
  const auto user = env.cluster.user();
  const auto here = current_host(env);
  RV_TRY(all, load_requests(env.requests));
  std::vector<RequestRecord> requests; // only those submitted where rv is connected now
  for (auto& r : all) {
    if (r.host.empty() || r.host == here) {
      requests.push_back(std::move(r));
    }
  }
  RV_TRY(outcomes, env.cluster.run_batch(status_commands(user, profile.quota_command)));
  RV_TRY(s, parse_status(outcomes, requests, !profile.quota_command.empty(), profile.su_per_billing_hour));
  s.host = env.cluster.where();
  s.user = user;
  return s;
}

namespace {

nlohmann::json gpus_json(const std::vector<GpuAvailability>& list)
{
  auto arr = nlohmann::json::array();
  for (const auto& a : list) {
    nlohmann::json j = {{"type", a.type},   {"idle", a.idle},
                        {"total", a.total}, {"unavailable", a.unavailable},
                        {"nodes", a.nodes}, {"unavailable_nodes", a.unavailable_nodes}};
    if (!a.partition.empty()) {
      j["partition"] = a.partition;
    }
    arr.push_back(j);
  }
  return arr;
}

std::string number(double v)
{
  return v == static_cast<double>(static_cast<long long>(v)) ? fmt::format("{}", static_cast<long long>(v))
                                                             : fmt::format("{:.1f}", v);
}

std::string gpu_line(const GpuAvailability& a)
{
  auto type = a.type.empty() ? std::string("(untyped)") : a.type;
  auto line = fmt::format("  {:<14} {:<14} {:>5}/{:<5} {:>3} node(s)", printable(type), printable(a.partition), a.idle,
                          a.total, a.nodes);
  if (a.unavailable > 0) {
    line += fmt::format("  {} GPU(s) on {} drained/down node(s)", a.unavailable, a.unavailable_nodes);
  }
  return line;
}

} // namespace

nlohmann::json to_json(const ClusterStatus& s)
{
  auto jobs = nlohmann::json::array();
  for (const auto& a : s.jobs) {
    jobs.push_back({{"request", a.request},
                    {"strategy", a.job.strategy_id},
                    {"job_id", a.job.job_id},
                    {"state", state_name(a.job)},
                    {"reason", a.job.reason},
                    {"reason_text", a.job.state == slurm::JobState::pending ? slurm::plain_reason(a.job.reason) : ""},
                    {"start_estimate", a.job.start_estimate},
                    {"nodes", a.job.node_list},
                    {"label", a.job.label}});
  }
  auto fair = nlohmann::json::array();
  for (const auto& r : s.fairshare) {
    fair.push_back({{"account", r.account},
                    {"user", r.user},
                    {"fair_share", r.fair_share ? nlohmann::json(*r.fair_share) : nlohmann::json()},
                    {"norm_shares", r.norm_shares ? nlohmann::json(*r.norm_shares) : nlohmann::json()},
                    {"effective_usage", r.effective_usage ? nlohmann::json(*r.effective_usage) : nlohmann::json()},
                    {"raw_usage", r.raw_usage ? nlohmann::json(*r.raw_usage) : nlohmann::json()}});
  }
  auto limits = nlohmann::json::array();
  for (const auto& l : s.limits) {
    limits.push_back({{"account", l.account},
                      {"user", l.user},
                      {"partition", l.partition},
                      {"limit", l.limit.name},
                      {"tres", l.limit.tres},
                      {"max", l.limit.limit},
                      {"used", l.limit.used}});
  }
  return {{"host", s.host},
          {"user", s.user},
          {"cluster", s.cluster},
          {"slurm_version", s.slurm_version},
          {"containers",
           {{"pyxis", s.containers.pyxis},
            {"pyxis_env", s.containers.pyxis_env}, // srun --container-env: the job's variables win over the image's
            {"apptainer", s.containers.apptainer.empty() ? nlohmann::json() : nlohmann::json(s.containers.apptainer)},
            {"apptainer_version", s.containers.apptainer_version},
            {"probed", s.containers.probed},
            {"text", rv::describe(s.containers)}}},
          {"gpus", {{"by_partition", gpus_json(s.by_partition)}, {"by_type", gpus_json(s.by_type)}}},
          {"requests", jobs},
          {"fairshare", fair},
          {"limits", limits},
          {"su_30d", s.su_30d},
          {"jobs_30d", s.jobs_30d},
          {"quota", s.quota ? nlohmann::json(*s.quota) : nlohmann::json()},
          {"warnings", s.warnings}};
}

std::vector<std::string> status_lines(const ClusterStatus& s)
{
  std::vector<std::string> out;
  out.push_back(fmt::format("rv status: {} on {} (cluster {}, Slurm {})", printable(s.user.empty() ? "?" : s.user),
                            s.host, printable(s.cluster.empty() ? "?" : s.cluster),
                            s.slurm_version.empty() ? "version unknown" : printable(s.slurm_version)));
  out.push_back(fmt::format("Containers: {} (rv run --container IMAGE)", printable(rv::describe(s.containers))));
  out.emplace_back();
  out.push_back(fmt::format("GPUs: idle/total per type and partition (each node once in 'all')"));
  for (const auto& a : s.by_partition) {
    out.push_back(gpu_line(a));
  }
  for (const auto& a : s.by_type) {
    auto all = a;
    all.partition = "all";
    out.push_back(gpu_line(all));
  }
  if (s.by_partition.empty()) {
    out.emplace_back("  no GPUs on this cluster");
  }
  out.emplace_back();
  out.emplace_back(s.jobs.empty() ? "Your requests: none active" : "Your requests:");
  for (const auto& a : s.jobs) {
    out.push_back(
        fmt::format("  {} {:<4} {:<8} {}", a.request, a.job.strategy_id, a.job.job_id, job_state_text(a.job)));
  }
  out.emplace_back();
  for (const auto& r : s.fairshare) {
    // What sshare left empty is left out, not shown as "?" (#24 item 12).
    std::vector<std::string> parts;
    if (r.effective_usage) {
      parts.push_back(fmt::format("effective usage {:.3f}", *r.effective_usage));
    }
    if (r.norm_shares) {
      parts.push_back(fmt::format("normalised shares {:.3f}", *r.norm_shares));
    }
    out.push_back(fmt::format("Fair-share ({}): {}{}", printable(r.account),
                              r.fair_share ? fmt::format("{:.3f}", *r.fair_share) : "not known",
                              parts.empty() ? "" : fmt::format(" ({})", text::join(parts, ", "))));
  }
  if (s.limits.empty()) {
    out.emplace_back("Limits: no group limits on your associations");
  } else {
    out.emplace_back("Limits (used / limit):");
    for (const auto& l : s.limits) {
      const auto who =
          l.user.empty() ? fmt::format("account {}", l.account) : fmt::format("user {} in {}", l.user, l.account);
      const auto what = l.limit.tres.empty() ? l.limit.name : fmt::format("{} {}", l.limit.name, l.limit.tres);
      const double pct = l.limit.limit > 0 ? 100.0 * l.limit.used / l.limit.limit : 0;
      out.push_back(fmt::format("  {:<28} {:<26} {} / {} ({:.1f}%){}", printable(who), printable(what),
                                number(l.limit.used), number(l.limit.limit), pct,
                                l.partition.empty() ? "" : " partition " + printable(l.partition)));
    }
  }
  out.push_back(
      fmt::format("SU spent in the last 30 days: {} ({} job(s))", number(std::round(s.su_30d * 10) / 10), s.jobs_30d));
  if (s.quota) {
    out.emplace_back("Storage quota:");
    for (auto line : text::lines(*s.quota)) {
      out.push_back("  " + printable(line));
    }
  }
  for (const auto& w : s.warnings) {
    out.push_back("warning: " + printable(w));
  }
  return out;
}

} // namespace rv::app
