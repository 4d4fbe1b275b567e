#include "app/why/why.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "app/request/record_view.hpp"
#include "app/run/plan/planning.hpp"
#include "core/duration.hpp"
#include "core/process/batch.hpp"
#include "slurm/discover.hpp"
#include "slurm/job_state.hpp"
#include "slurm/jobs.hpp"
#include "slurm/sacct.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/text.hpp"
#include "strategy/plan.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace rv::app {
namespace {

constexpr std::string_view why_sacct_fields =
    "JobID,State,ExitCode,Elapsed,Start,End,NodeList,AllocTRES,Partition,Reason,JobName";

// The request `key` names, or the latest pending one (else the latest of all).
Result<RequestRecord> pick_request(Env& env, const std::string& key)
{
  RV_TRY(named, requests_for_key(env, key, Unnamed::newest_submitted));
  if (named.empty()) {
    return fail(ErrorCode::usage, "no requests to explain", "rv run submits one; rv why ID explains it");
  }
  return std::move(named.front());
}

// The one line for a request none of whose jobs waits any longer.
std::string ended_line(const RequestRecord& rec, const std::vector<WhyJob>& jobs,
                       const std::map<std::string, slurm::SacctJob>& acct)
{
  const WhyJob* pick = nullptr;
  for (const auto& j : jobs) {
    if (j.strategy_id == rec.winner || (!pick && acct.contains(j.job_id) && acct.at(j.job_id).start_time)) {
      pick = &j;
    }
  }
  if (pick == nullptr) {
    const bool known = !jobs.empty() && jobs.front().state != slurm::JobState::unknown;
    return fmt::format("request {} ended before any of its {} job(s) started ({})", rec.id, jobs.size(),
                       known ? slurm::to_string(jobs.front().state) : to_string(rec.state));
  }
  std::string line =
      fmt::format("request {} ended: {} (job {}, {}", rec.id, slurm::to_string(pick->state), pick->job_id, pick->label);
  if (auto it = acct.find(pick->job_id); it != acct.end()) {
    line += fmt::format(", exit {}", it->second.exit_status);
    if (it->second.exit_signal != 0) {
      line += fmt::format(", signal {}", it->second.exit_signal);
    }
    if (!it->second.nodes.empty()) {
      line += " on " + it->second.nodes;
    }
    if (it->second.elapsed_s > 0) {
      line += ", ran " + format_human_duration(it->second.elapsed_s);
    }
  }
  line += ")";
  if (pick->reason.known && pick->reason.code != "None") {
    line += fmt::format(": {} ({})", pick->reason.plain, pick->reason.code);
  }
  return line;
}

// Fills the report's alternatives: re-plans the variants of the request against `cluster`,
// probing their shapes in one round trip.
void find_alternatives(Env& env, const WhyOptions& opts, const RequestRecord& rec, const model::Cluster& cluster,
                       WhyReport& rep)
{
  auto request = recorded_request(rec);
  if (!request) {
    rep.notes.push_back("no alternatives: " + request.error().message);
    return;
  }
  auto profile = load_profile(env.settings.profile);
  if (!profile) {
    rep.notes.push_back("no alternatives: " + profile.error().message);
    return;
  }
  const auto& options = opts.plan_options;
  auto variants = probe_variants(*request);
  std::vector<strategy::Candidate> union_list;
  for (const auto& v : variants) {
    auto c = strategy::enumerate_candidates(cluster, *profile, v.request, options);
    if (!c) {
      continue;
    }
    for (auto& cand : c->list) {
      auto same = [&](const strategy::Candidate& u) {
        return u.shape() == cand.shape() && u.cpus_per_task == cand.cpus_per_task &&
               u.mem_mb_per_node == cand.mem_mb_per_node && u.gres == cand.gres && u.exclude == cand.exclude;
      };
      auto it = std::find_if(union_list.begin(), union_list.end(), same);
      if (it == union_list.end()) {
        union_list.push_back(std::move(cand));
      } else {
        it->probe_full_s = std::max(it->probe_full_s, cand.probe_full_s);
      }
    }
  }
  for (std::size_t i = 0; i < union_list.size(); ++i) {
    union_list[i].id = fmt::format("c{}", i + 1);
  }
  if (union_list.empty()) {
    rep.notes.push_back("no alternatives: no GPU type can run the request or its variants");
    return;
  }
  auto windows = probe_windows(env.cluster, union_list, options);
  if (!windows) {
    rep.notes.push_back("no alternatives: " + windows.error().message);
    return;
  }
  rep.replanned = true;
  std::vector<VariantPlan> plans;
  std::vector<std::int64_t> measured;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    auto p = strategy::plan(cluster, *profile, variants[i].request, *windows, options);
    if (!p) {
      continue;
    }
    if (i == 0) {
      for (const auto& w : p->windows) {
        if (w.max_now_s > 0) {
          measured.push_back(w.max_now_s);
        }
      }
    }
    plans.push_back({variants[i], p->strategies});
  }
  for (auto& v : derived_variants(*request, measured)) {
    if (auto p = strategy::plan(cluster, *profile, v.request, *windows, options)) {
      plans.push_back({std::move(v), p->strategies});
    }
  }
  std::vector<std::string> labels;
  for (const auto& j : rec.jobs) {
    labels.push_back(j.label);
  }
  rep.alternatives =
      pick_alternatives(plans, labels, rep.best_start_in_s, options.now_threshold_s,
                        alternative_margin_s(rep.best_start_in_s, options.now_threshold_s), opts.max_alternatives);
  if (rep.alternatives.empty()) {
    rep.notes.push_back("no change of GPU type, GPU count or time would start sooner than this request");
  }
}

// The one round trip of rv why, each command read back by name.
struct WhyBatch {
  proc::Batch batch{"rv why"};
  proc::Handle date, request, pending, running, sacct;
  proc::HandleRange jobs;                     // scontrol show job, one per job id
  std::optional<proc::HandleRange> discovery; // none once the request is final
};

// The cluster's clock, the request's jobs and the queue around them (pending jobs of its
// partitions, every running job), sacct and scontrol per job, and the cluster unless final.
WhyBatch why_batch(Env& env, const RequestRecord& rec, bool final)
{
  const auto ids = rec.job_ids();
  std::vector<std::string> partitions;
  for (const auto& j : rec.jobs) {
    if (!j.job_id.empty() && std::find(partitions.begin(), partitions.end(), j.partition) == partitions.end()) {
      partitions.push_back(j.partition);
    }
  }
  WhyBatch b;
  b.date = b.batch.add(slurm::command({"date", "+%s %z"}));
  b.request = b.batch.add(slurm::command(slurm::squeue_query_argv("all", {}, ids, why_queue_format)));
  b.pending = b.batch.add(slurm::command(slurm::squeue_query_argv("PD", partitions, {}, why_queue_format)));
  b.running = b.batch.add(slurm::command(slurm::squeue_query_argv("R,CG", {}, {}, why_queue_format)));
  b.sacct = b.batch.add(slurm::command(slurm::sacct_argv(ids, why_sacct_fields)));
  std::vector<proc::Command> shows;
  for (const auto& id : ids) {
    shows.push_back(slurm::command(slurm::show_job_argv(id, true)));
  }
  b.jobs = b.batch.add(std::move(shows));
  if (!final) {
    slurm::DiscoveryQuery q;
    q.user = env.cluster.user();
    b.discovery = b.batch.add(slurm::discovery_commands(q));
  }
  return b;
}

// What the round trip says, parsed; what could not be read is a note in the report.
struct WhyFacts {
  std::int64_t now = 0;                // the cluster's clock: start estimates are cluster-local
  std::int64_t offset = 0;             // its UTC offset
  std::vector<slurm::SqueueJob> mine;  // the request's rows
  std::vector<slurm::SqueueJob> queue; // pending jobs of its partitions, then every running job
  std::map<std::string, slurm::SacctJob> acct;
  std::map<std::string, slurm::JobInfo> info;
  std::optional<model::Cluster> cluster;
};

WhyFacts read_facts(Env& env, const WhyBatch& b, const proc::Answers& a, WhyReport& rep)
{
  WhyFacts f;
  f.now = env.clock.epoch_seconds();
  if (auto w = slurm::text::split_ws(a[b.date].out); w.size() == 2) {
    f.now = slurm::text::to_int(w[0]).value_or(f.now);
    f.offset = slurm::parse_utc_offset(w[1]).value_or(0);
  }
  auto rows = [&](proc::Handle h) {
    auto r = slurm::parse_squeue(a[h].out, why_queue_format);
    if (!r) {
      rep.notes.push_back("squeue: " + r.error().message);
    }
    return r ? *r : std::vector<slurm::SqueueJob>{};
  };
  f.mine = rows(b.request);
  f.queue = rows(b.pending);
  auto running = rows(b.running);
  f.queue.insert(f.queue.end(), running.begin(), running.end());
  if (auto jobs = slurm::parse_sacct(a[b.sacct].out, why_sacct_fields)) {
    for (auto& j : *jobs) {
      f.acct[j.job_id] = std::move(j);
    }
  }
  for (const auto& show : a[b.jobs]) {
    if (auto js = slurm::parse_scontrol_jobs(show.out)) {
      for (auto& j : *js) {
        f.info[j.job_id] = std::move(j);
      }
    }
  }
  if (b.discovery) {
    const auto d = a[*b.discovery];
    if (auto c = slurm::parse_discovery(std::vector<proc::Outcome>(d.begin(), d.end()))) {
      f.cluster = std::move(*c);
    } else {
      rep.notes.push_back("discovery: " + c.error().message);
    }
  }
  return f;
}

// When the pending job of `row` may start (the report's soonest start follows), and what is ahead of it.
void place_in_queue(WhyJob& w, const slurm::SqueueJob& row, const std::optional<slurm::ClusterTime>& estimate,
                    const WhyFacts& f, WhyReport& rep)
{
  if (estimate) {
    w.start_in_s = std::max<std::int64_t>(0, slurm::to_unix_seconds(*estimate, f.offset) - f.now);
    if (!rep.best_start_in_s || *w.start_in_s < *rep.best_start_in_s) {
      rep.best_start_in_s = w.start_in_s;
      rep.best_start = w.start_estimate;
    }
  }
  std::vector<std::string> part_nodes;
  if (f.cluster) {
    for (const auto& p : slurm::text::comma_list(row.partition)) {
      if (const auto* part = f.cluster->find_partition(p)) {
        part_nodes.insert(part_nodes.end(), part->nodes.begin(), part->nodes.end());
      }
    }
  }
  w.ahead = whats_ahead(row, f.queue, part_nodes);
}

// Whether `w` still waits: Slurm says pending, or (the request not final) Slurm does not know it yet.
bool is_waiting(const WhyJob& w, bool final)
{
  return w.state == slurm::JobState::pending || (w.state == slurm::JobState::unknown && !final);
}

// Job `jr` of `rec` as Slurm sees it now: squeue's row (a row with another name is a reused id,
// not this job), else sacct's, else as last recorded; scontrol adds the dependency and estimate.
WhyJob explain_job(const RequestRecord& rec, const JobRecord& jr, const WhyFacts& f, bool final, WhyReport& rep)
{
  WhyJob w;
  w.strategy_id = jr.strategy_id;
  w.label = jr.label;
  w.job_id = jr.job_id;
  w.est_su = planned_su(rec, jr.strategy_id);
  const slurm::SqueueJob* row = nullptr;
  for (const auto& m : f.mine) {
    if (m.job_id == jr.job_id && (m.name == rec.name || rec.name.empty())) {
      row = &m;
    }
  }
  std::optional<slurm::ClusterTime> estimate; // squeue %S, else scontrol StartTime
  if (row != nullptr) {
    w.state = slurm::parse_job_state(row->state);
    w.raw_reason = row->reason;
    w.nodes = row->nodes;
    w.priority = row->priority;
    estimate = row->start_time;
  } else if (auto it = f.acct.find(jr.job_id); it != f.acct.end()) {
    w.state = slurm::parse_job_state(it->second.state);
    w.raw_reason = it->second.reason;
    w.nodes = it->second.nodes;
  } else {
    w.state = jr.state; // as last recorded: Slurm has forgotten it
  }
  if (auto it = f.info.find(jr.job_id); it != f.info.end()) {
    w.dependency = it->second.dependency;
    if (w.raw_reason.empty()) {
      w.raw_reason = it->second.reason;
    }
    if (!estimate && row != nullptr) {
      estimate = it->second.start_time;
    }
  }
  if (estimate) {
    w.start_estimate = slurm::format_cluster_time(*estimate);
  }
  w.reason = slurm::explain_reason(w.raw_reason);
  if (is_waiting(w, final) && row != nullptr) {
    place_in_queue(w, *row, estimate, f, rep);
  }
  return w;
}

// The report's status and one-line summary from its jobs; a pending request's alternatives.
void summarize(Env& env, const WhyOptions& opts, const RequestRecord& rec, const WhyFacts& f, bool final,
               WhyReport& rep)
{
  auto running = [](const WhyJob& j) { return slurm::is_started(j.state) && !slurm::is_terminal(j.state); };
  auto ended = [&](const WhyJob& j) { return slurm::is_terminal(j.state) || (final && !is_waiting(j, final)); };
  if (auto it = std::find_if(rep.jobs.begin(), rep.jobs.end(), running); it != rep.jobs.end()) {
    rep.status = "running";
    rep.summary = fmt::format("request {} is running: job {} ({}) on {}; nothing to wait for (rv logs -f {})", rec.id,
                              it->job_id, it->label, it->nodes.empty() ? "?" : it->nodes, rec.id);
  } else if (std::all_of(rep.jobs.begin(), rep.jobs.end(), ended)) {
    rep.status = "ended";
    rep.summary = ended_line(rec, rep.jobs, f.acct);
  } else {
    rep.status = "pending";
    const auto waiting = std::count_if(rep.jobs.begin(), rep.jobs.end(),
                                       [](const WhyJob& j) { return j.state == slurm::JobState::pending; });
    rep.summary = rep.best_start_in_s
                      ? fmt::format("request {} is pending: {} job(s) waiting; the soonest may start {} ({})", rec.id,
                                    waiting, wait_in_words(rep.best_start_in_s), rep.best_start)
                      : fmt::format("request {} is pending: {} job(s) waiting; Slurm gives no start estimate yet",
                                    rec.id, waiting);
    if (opts.replan && f.cluster) {
      find_alternatives(env, opts, rec, *f.cluster, rep);
    }
  }
}

// The report of a request without a job id: still being submitted, or refused everywhere.
void describe_jobless(const RequestRecord& rec, WhyReport& rep)
{
  const bool submitting = rec.state == RequestState::submitting;
  rep.status = submitting ? "submitting" : "ended";
  rep.summary =
      submitting
          ? fmt::format("request {} is still being submitted (if rv died meanwhile, rv ps finds its jobs)", rec.id)
          : fmt::format("request {} ended ({}) without a job: sbatch refused every strategy", rec.id,
                        to_string(rec.state));
}

} // namespace

Result<WhyReport> explain_request(Env& env, const WhyOptions& opts)
{
  const auto t0 = env.clock.now();
  RV_TRY(rec, pick_request(env, opts.key)); // connects: the record's host is compared with where rv is
  const int trips0 = env.cluster.round_trips();
  WhyReport rep;
  rep.now_threshold_s = opts.plan_options.now_threshold_s;
  rep.request_id = rec.id;
  rep.name = rec.name;
  rep.host = rec.host;
  if (rec.job_ids().empty()) {
    describe_jobless(rec, rep);
    return rep;
  }
  const bool final = is_final_state(rec.state);
  const auto batch = why_batch(env, rec, final);
  RV_TRY(answers, batch.batch.run(env.cluster));
  const auto facts = read_facts(env, batch, answers, rep);
  for (const auto& jr : rec.jobs) {
    if (!jr.job_id.empty()) {
      rep.jobs.push_back(explain_job(rec, jr, facts, final, rep));
    }
  }
  summarize(env, opts, rec, facts, final, rep);
  rep.round_trips = env.cluster.round_trips() - trips0;
  rep.seconds = std::chrono::duration<double>(env.clock.now() - t0).count();
  spdlog::debug("why: {} round trips, {:.2f} s", rep.round_trips, rep.seconds);
  return rep;
}

} // namespace rv::app
