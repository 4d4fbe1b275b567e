#include "app/node/gpu.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/printable.hpp"
#include "core/text.hpp"
#include "slurm/gpu_faults.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/job_state.hpp"
#include "slurm/jobs.hpp"
#include "templates/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace rv::app {
namespace {

constexpr int k_smi_timeout_s = 20; // one node's nvidia-smi; a hung driver does not hang rv gpu

// The job of `r` that rv gpu looks at: the one `key` names by job id, else the winner.
const JobRecord* job_of(const RequestRecord& r, const std::string& key)
{
  for (const auto& j : r.jobs) {
    if (!key.empty() && j.job_id == key) {
      return &j;
    }
  }
  return r.winner_job();
}

bool running(const JobRecord* j)
{
  return j && j->state == slurm::JobState::running;
}

// Why request `r` has no running job to look at: a usage error with what to do.
Error not_running(const RequestRecord& r, const JobRecord* j)
{
  if (!request_finished(r)) {
    std::string where;
    for (const auto& s : r.jobs) {
      if (!s.job_id.empty() && where.empty()) {
        where = fmt::format(" ({} {}{})", s.job_id,
                            slurm::to_string(s.state == slurm::JobState::unknown ? slurm::JobState::pending : s.state),
                            s.reason.empty() ? "" : ": " + s.reason);
      }
    }
    return Error{ErrorCode::usage, fmt::format("request {} has not started yet{}", r.id, where),
                 fmt::format("rv ps shows where it stands; rv logs -f {} waits for it to start", r.id)};
  }
  const auto how = j && j->state != slurm::JobState::unknown ? state_name(*j) : std::string(to_string(r.state));
  return Error{ErrorCode::usage, fmt::format("request {} has ended ({}): its GPUs are gone", r.id, how),
               "rv gpu shows the GPUs of a running job; rv ps -a lists the ended ones"};
}

} // namespace

Result<GpuTarget> gpu_target(Env& env, const std::string& key)
{
  if (key.empty()) {
    settle_open_races(env); // the newest running request may be a race's winner no rv chose yet
  }
  RV_TRY(candidates, requests_for_key(env, key, Unnamed::unfinished));
  if (candidates.empty()) {
    return fail(ErrorCode::usage, "no running request", "start one with rv run or rv up; rv ps -a lists them all");
  }
  RV_TRY(report, refresh_and_reap(env.cluster, env.clock, env.requests, candidates));
  (void)report;
  // With a KEY, the request it names; without, the newest whose winner runs (else why the newest does not).
  RequestRecord r = candidates.front();
  if (key.empty()) {
    auto newest = std::find_if(candidates.begin(), candidates.end(),
                               [](const RequestRecord& a) { return running(a.winner_job()); });
    if (newest != candidates.end()) {
      r = *newest;
    }
  }
  const auto* j = job_of(r, key);
  if (!running(j)) {
    return std::unexpected(not_running(r, j));
  }
  auto nodes = slurm::expand_hostlist(j->node_list);
  if (!nodes || nodes->empty()) {
    return fail(ErrorCode::parse,
                fmt::format("job {} runs on '{}', which is not a node list", j->job_id, j->node_list));
  }
  return GpuTarget{r, j->job_id, std::move(*nodes)};
}

proc::Command gpu_command(const std::string& job_id, const std::vector<std::string>& nodes, bool all_nodes)
{
  const auto n = std::to_string(nodes.size());
  const std::string smi = fmt::format("timeout -k 2 {} env -u CUDA_VISIBLE_DEVICES nvidia-smi", k_smi_timeout_s);
  const std::string task =
      "printf '@rv-node %s\\n' \"${SLURMD_NODENAME:-$(hostname)}\"; " +
      fmt::format("o=$({} --query-gpu={} --format=csv,noheader,nounits 2>&1); ", smi, slurm::k_smi_gpu_fields) +
      "printf '@rv-gpus %s\\n' \"$?\"; [ -z \"$o\" ] || printf '%s\\n' \"$o\"; " +
      fmt::format("o=$({} --query-compute-apps={} --format=csv,noheader,nounits 2>&1); ", smi,
                  slurm::k_smi_app_fields) +
      "printf '@rv-apps %s\\n' \"$?\"; [ -z \"$o\" ] || printf '%s\\n' \"$o\"";
  slurm::StepOptions step;
  step.job_id = job_id;
  step.nodes = nodes.size();
  step.labelled = true;
  if (!all_nodes) {
    step.nodelist = nodes;
  }
  proc::Command c;
  c.argv = slurm::step_argv(step, {"bash", "-c", task});
  c.timeout = std::chrono::seconds(k_smi_timeout_s * 2 + 30);
  return c;
}

namespace {

struct TaskText {
  std::string node;
  std::string gpus, apps; // the section texts
  int gpus_rc = -1, apps_rc = -1;
};

// One node's answer, from its task's lines.
NodeGpus node_answer(const TaskText& t)
{
  NodeGpus n;
  n.node = t.node;
  auto explain = [&](int rc, const std::string& text) {
    if (rc == 127) {
      return std::string("nvidia-smi is not installed on this node");
    }
    if (rc == 124 || rc == 137) {
      return fmt::format("nvidia-smi did not answer within {} s (a hung driver or GPU?)", k_smi_timeout_s);
    }
    const std::string line = text.substr(0, text.find('\n'));
    const auto first = text::trim(line);
    return fmt::format("nvidia-smi exited {}{}", rc, first.empty() ? "" : ": " + printable(first));
  };
  if (t.gpus_rc != 0) {
    n.error = explain(t.gpus_rc, t.gpus);
    return n;
  }
  const std::vector<std::string> gf = [] {
    std::vector<std::string> f;
    for (auto s : text::split(slurm::k_smi_gpu_fields, ",")) {
      f.emplace_back(s);
    }
    return f;
  }();
  auto table = slurm::parse_smi_csv(t.gpus, gf);
  auto gpus = table ? slurm::read_gpus(*table) : Result<std::vector<slurm::GpuReading>>(std::unexpected(table.error()));
  if (!gpus) {
    n.error = gpus.error().message;
    return n;
  }
  n.gpus = std::move(*gpus);
  if (t.apps_rc == 0) {
    std::vector<std::string> af;
    for (auto s : text::split(slurm::k_smi_app_fields, ",")) {
      af.emplace_back(s);
    }
    if (auto at = slurm::parse_smi_csv(t.apps, af)) {
      if (auto p = slurm::read_processes(*at)) {
        n.processes = std::move(*p);
      }
    }
  }
  return n;
}

// `  3: text` (srun --label): the task number and the text, or nullopt.
std::optional<std::pair<int, std::string_view>> labelled(std::string_view line)
{
  auto t = line;
  while (!t.empty() && t.front() == ' ') {
    t.remove_prefix(1);
  }
  std::size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
    ++i;
  }
  if (i == 0 || i > 6 || i >= t.size() || t[i] != ':') {
    return std::nullopt;
  }
  auto rest = t.substr(i + 1);
  if (rest.starts_with(' ')) {
    rest.remove_prefix(1);
  }
  return std::pair{std::stoi(std::string(t.substr(0, i))), rest};
}

} // namespace

std::vector<NodeGpus> parse_gpu_output(std::string_view out, const std::vector<std::string>& nodes)
{
  std::map<int, TaskText> tasks;
  std::map<int, std::string*> section; // where each task's lines go now
  for (auto line : text::lines(out)) {
    auto l = labelled(line);
    if (!l) {
      continue;
    }
    auto& t = tasks[l->first];
    auto text = l->second;
    auto rc_of = [](std::string_view s) { return std::atoi(std::string(s).c_str()); };
    if (text.starts_with("@rv-node ")) {
      t.node = std::string(text.substr(9));
      section[l->first] = nullptr;
    } else if (text.starts_with("@rv-gpus ")) {
      t.gpus_rc = rc_of(text.substr(9));
      section[l->first] = &t.gpus;
    } else if (text.starts_with("@rv-apps ")) {
      t.apps_rc = rc_of(text.substr(9));
      section[l->first] = &t.apps;
    } else if (auto* s = section[l->first]) {
      s->append(text).push_back('\n');
    }
  }
  std::vector<NodeGpus> result;
  for (const auto& name : nodes) {
    auto it = std::find_if(tasks.begin(), tasks.end(), [&](const auto& kv) { return kv.second.node == name; });
    if (it == tasks.end()) {
      result.push_back({name, {}, {}, "no answer from this node (see -v for srun's messages)"});
      continue;
    }
    result.push_back(node_answer(it->second));
  }
  return result;
}

Result<GpuReport> query_gpus(Env& env, const GpuTarget& target, int node)
{
  std::vector<std::string> nodes = target.nodes;
  if (node >= 0) {
    if (node >= static_cast<int>(nodes.size())) {
      return fail(ErrorCode::usage,
                  fmt::format("--node {}: job {} has {} node(s) ({})", node, target.job_id, nodes.size(),
                              text::join(nodes, ",")),
                  fmt::format("use --node 0 to {}", nodes.size() - 1));
    }
    nodes = {nodes[static_cast<std::size_t>(node)]};
  }
  const auto dir = templates::watchdog_dir(target.request.remote_root, target.request.id);
  RV_TRY(outs, env.cluster.run_batch({gpu_command(target.job_id, nodes, node < 0), samples_command({dir})}));
  if (outs.size() != 2) {
    return fail(ErrorCode::generic, "rv gpu: the round trip lost a command's answer");
  }
  GpuReport report;
  report.request_id = target.request.id;
  report.job_id = target.job_id;
  report.time = env.clock.epoch_seconds();
  if (outs[0].timed_out) {
    return fail(ErrorCode::timeout, fmt::format("srun into job {} did not finish in time", target.job_id),
                "the job's nodes may be busy or unreachable; rv ps shows its state");
  }
  report.nodes = parse_gpu_output(outs[0].out, nodes);
  const bool none = std::all_of(report.nodes.begin(), report.nodes.end(),
                                [](const NodeGpus& n) { return n.gpus.empty() && !n.error.empty(); });
  if (none && !outs[0].ok()) {
    auto err = text::trim(outs[0].err);
    if (err.find("already completed") != std::string_view::npos ||
        err.find("Invalid job id") != std::string_view::npos) {
      return fail(ErrorCode::usage, fmt::format("job {} of request {} has ended", target.job_id, target.request.id),
                  "rv ps -a shows how it ended");
    }
    return fail(ErrorCode::generic,
                fmt::format("srun into job {} failed: {}", target.job_id, printable(text::shorten(err, 200))),
                "rv ps shows the job's state; run with -v for srun's full answer");
  }
  const auto samples = split_samples(outs[1].out);
  if (auto it = samples.find(dir); it != samples.end()) {
    auto a = assess(it->second, target.nodes, target.job_id, env.settings.watchdog_interval_s, target.nodes.size() > 1);
    if (a.nodes > 0) {
      report.activity = a;
    }
  }
  return report;
}

} // namespace rv::app
