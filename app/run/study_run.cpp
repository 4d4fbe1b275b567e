#include "app/run/study_run.hpp"

#include "app/run/study_across.hpp"
#include "app/run/study_parts.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "app/run/launch/launch.hpp"
#include "app/run/launch/submit.hpp"
#include "app/run/launch/uncertain_submit.hpp"
#include "app/run/plan/planning.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/process/batch.hpp"
#include "core/process/remote_files.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/lock_probe.hpp"
#include "core/text.hpp"
#include "slurm/backoff.hpp"
#include "slurm/job_state.hpp"
#include "slurm/jobs.hpp"
#include "slurm/monitor.hpp"
#include "slurm/squeue.hpp"
#include "slurm/submit.hpp"
#include "strategy/plan.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace rv::app {
namespace study_parts {

// A worker sized for several tasks gets this much more walltime: its set-up (preflight, venv)
// and the moments between tasks, so that its last task still finds its --time left.
constexpr std::int64_t k_worker_margin_s = 120;

// The plan's worker strategies, the ones `which` names, given ids unique in the request:
// `<strategy>.w<n>`, n counting on from `next`.
PlanRun workers_plan(const PlanRun& base, const std::vector<model::Strategy>& strategies,
                     const std::vector<std::size_t>& which, int& next)
{
  PlanRun out = base;
  out.plan.strategies.clear();
  for (auto k : which) {
    auto s = strategies[k];
    s.id = fmt::format("{}.w{}", s.id, next++);
    out.plan.strategies.push_back(std::move(s));
  }
  return out;
}

// The next worker number of the request (one past the highest `.w<n>` its jobs carry).
int next_worker_number(const RequestRecord& rec)
{
  int next = 1;
  for (const auto& j : rec.jobs) {
    const auto dot = j.strategy_id.rfind(".w");
    if (dot != std::string::npos) {
      try {
        next = std::max(next, std::stoi(j.strategy_id.substr(dot + 2)) + 1);
      } catch (const std::exception&) {
      }
    }
  }
  return next;
}

// Submits one more worker of each of `which` (indexes into `kinds`) from the kept scripts: each is
// recorded before its sbatch and its job id after. A worker whose sbatch answer was lost is searched
// for by its comment and tracked, never cancelled: a worker only claims tasks, it cannot run one
// twice, and one rv never learns of still works the queue down.
Result<int> add_workers(Env& env, RequestRecord& rec, const std::vector<study::WorkerKind>& kinds,
                        const std::vector<std::size_t>& which)
{
  const std::size_t first = rec.jobs.size();
  int next = next_worker_number(rec);
  std::vector<slurm::Submission> subs;
  for (auto k : which) {
    auto s = kinds[k].strategy;
    s.id = fmt::format("{}.w{}", s.id, next++);
    add_job_record(rec, s);
    subs.push_back({s.id, kinds[k].script});
  }
  save(env.requests, rec); // the intent before the sbatch: nothing submitted is unknown
  std::vector<std::size_t> uncertain;
  auto results = slurm::submit_all(env.cluster, subs);
  if (!results) {
    for (std::size_t k = 0; k < subs.size(); ++k) {
      uncertain.push_back(first + k);
      rec.jobs[first + k].error = "sbatch's answer was lost: " + results.error().message;
    }
  } else {
    for (std::size_t k = 0; k < results->size(); ++k) {
      auto& job = rec.jobs[first + k];
      job.job_id = (*results)[k].job_id;
      job.error = (*results)[k].error;
      job.state = job.job_id.empty() ? slurm::JobState::unknown : slurm::JobState::pending;
      job.submitted_at = job.job_id.empty() ? 0 : env.clock.epoch_seconds();
      if ((*results)[k].uncertain) {
        uncertain.push_back(first + k);
      }
    }
  }
  if (!uncertain.empty()) {
    auto found = track_uncertain_submissions(env.cluster, env.clock, rec, uncertain);
    if (!found) {
      spdlog::warn("study {}: could not look for the workers whose sbatch answer was lost: {}", rec.id,
                   found.error().message);
    } else if (!found->empty()) {
      spdlog::info("study {}: {}", rec.id, *found);
    }
  }
  save(env.requests, rec);
  if (!results) {
    return std::unexpected(results.error());
  }
  return static_cast<int>(std::count_if(rec.jobs.begin() + static_cast<std::ptrdiff_t>(first), rec.jobs.end(),
                                        [](const JobRecord& j) { return !j.job_id.empty(); }));
}

std::string pool_text(const std::vector<model::Strategy>& strategies, const study::PoolPlan& pool)
{
  std::map<std::size_t, int> per;
  for (auto k : pool.submit) {
    ++per[k];
  }
  std::string out = fmt::format(
      "workers: {} to submit (at most {} alive); expected: the last task ends in {}, {:.1f} SU\n", pool.submit.size(),
      pool.target, pool.makespan_s < 1e9 ? format_human_duration(static_cast<std::int64_t>(pool.makespan_s)) : "-",
      pool.su);
  for (const auto& [k, n] : per) {
    const auto& s = strategies[k];
    out += fmt::format("  {} x {:<4} {}  wait {}  {:.1f} SU per worker\n", n, s.id, s.label,
                       wait_in_words(s.est_wait_s), s.est_su);
  }
  for (const auto& n : pool.notes) {
    out += "  note: " + n + "\n";
  }
  return out;
}

// The user's jobs pending or running (they count against the limits), 0 with a warning when
// squeue cannot say: one round trip, made only when the user has a limit.
int count_my_jobs(Env& env)
{
  auto o = env.cluster.run(slurm::patient_command(slurm::my_jobs_argv()));
  auto jobs = o && o->ok() ? slurm::parse_squeue(o->out, slurm::request_jobs_format)
                           : Result<std::vector<slurm::SqueueJob>>(
                                 fail(ErrorCode::io, o ? text::first_line(o->err) : o.error().message));
  if (!jobs) {
    spdlog::warn("could not list your jobs (they count as none against the limits): {}", jobs.error().message);
    return 0;
  }
  return slurm::jobs_not_of(*jobs, "");
}

int alive_workers(const RequestRecord& rec, const std::set<std::string>& ended)
{
  return static_cast<int>(std::count_if(rec.jobs.begin(), rec.jobs.end(), [&](const JobRecord& j) {
    return !j.job_id.empty() && !slurm::is_terminal(j.state) && !ended.contains(j.job_id);
  }));
}

// Each kept worker strategy's part of the pool (study::KindPool), from the request's jobs.
std::vector<study::KindPool> kind_pools(const RequestRecord& rec, const std::vector<study::WorkerKind>& kinds,
                                        std::int64_t now, const std::set<std::string>& ended,
                                        const std::vector<study::TaskStatus>& tasks)
{
  std::map<std::string, std::int64_t> in_flight; // job -> its running task's start
  for (const auto& t : tasks) {
    if (t.state == study::TaskState::running && !t.job_id.empty() && t.started_at > 0) {
      in_flight[t.job_id] = t.started_at;
    }
  }
  std::vector<study::KindPool> out;
  for (const auto& k : kinds) {
    study::KindPool p;
    p.slots = k.slots;
    for (const auto& j : rec.jobs) {
      if (j.job_id.empty() || study::base_strategy_id(j.strategy_id) != k.strategy.id) {
        continue;
      }
      const auto since = j.submitted_at > 0 ? std::max<std::int64_t>(0, now - j.submitted_at) : 0;
      if (ended.contains(j.job_id)) {
        continue; // its end is marked: it claims no more (Slurm may say it runs a moment longer)
      }
      if (!slurm::is_terminal(j.state) && slurm::is_started(j.state) && !tasks.empty()) {
        study::BusyWorker b;
        if (auto f = in_flight.find(j.job_id); f != in_flight.end()) {
          b.task_ran_s = std::max<std::int64_t>(0, now - f->second);
        }
        if (j.started_at > 0 && k.strategy.walltime_s > 0) {
          b.left_s = std::max<std::int64_t>(0, j.started_at + k.strategy.walltime_s - now);
        }
        p.busy.push_back(b);
      }
      if (!slurm::is_terminal(j.state)) {
        (slurm::is_started(j.state) ? p.running : p.pending) += 1;
        if (!slurm::is_started(j.state)) {
          p.pending_for_s = std::max(p.pending_for_s, since);
          p.waited_s = std::max(p.waited_s, since);
        }
      } else if (j.cancelled_pending_at > 0 && j.submitted_at > 0) {
        p.waited_s = std::max(p.waited_s, j.cancelled_pending_at - j.submitted_at);
      }
    }
    out.push_back(p);
  }
  return out;
}

// The median time the study's ended tasks took; 0 when none has ended yet.
double median_task_s(const std::vector<study::TaskStatus>& tasks)
{
  std::vector<std::int64_t> took;
  for (const auto& t : tasks) {
    if (t.state == study::TaskState::done && t.started_at > 0 && t.ended_at >= t.started_at) {
      took.push_back(t.ended_at - t.started_at);
    }
  }
  if (took.empty()) {
    return 0;
  }
  std::nth_element(took.begin(), took.begin() + static_cast<std::ptrdiff_t>(took.size() / 2), took.end());
  return static_cast<double>(std::max<std::int64_t>(1, took[took.size() / 2]));
}

// Cancels `pool.cancel[k]` of the pending workers of each kind (the newest first), only while
// they still pend: a worker that started meanwhile runs on (the next poll reads its state).
void cancel_spare_workers(Env& env, const RequestRecord& rec, const std::vector<study::WorkerKind>& kinds,
                          const study::PoolPlan& pool)
{
  std::vector<std::string> ids;
  for (std::size_t k = 0; k < kinds.size() && k < pool.cancel.size(); ++k) {
    int left = pool.cancel[k];
    for (auto j = rec.jobs.rbegin(); j != rec.jobs.rend() && left > 0; ++j) {
      if (!j->job_id.empty() && j->state == slurm::JobState::pending &&
          study::base_strategy_id(j->strategy_id) == kinds[k].strategy.id) {
        ids.push_back(j->job_id);
        --left;
      }
    }
  }
  if (ids.empty()) {
    return;
  }
  if (auto c = slurm::cancel_jobs(env.cluster, ids, rec.name, true); !c) {
    spdlog::warn("study {}: could not cancel spare workers {}: {}", rec.id, text::join(ids, " "), c.error().message);
  } else {
    spdlog::info("study {}: cancelled {} pending worker(s) the pool no longer needs: {}", rec.id, ids.size(),
                 text::join(ids, " "));
  }
}

// Prints `text` of task `t`, each whole line prefixed `[t] ` (unless `no_prefix`).
void print_task_output(Env& env, TaskLog& log, int t, std::string_view text, bool no_prefix, bool flush)
{
  log.partial.append(text);
  std::string out;
  std::size_t pos = 0;
  for (auto nl = log.partial.find('\n'); nl != std::string::npos; nl = log.partial.find('\n', pos)) {
    out += (no_prefix ? std::string() : fmt::format("[{}] ", t)) + log.partial.substr(pos, nl + 1 - pos);
    pos = nl + 1;
  }
  log.partial.erase(0, pos);
  if (flush && !log.partial.empty()) {
    out += (no_prefix ? std::string() : fmt::format("[{}] ", t)) + log.partial + "\n";
    log.partial.clear();
  }
  if (!out.empty()) {
    env.output.out(out);
  }
}

void show_task_round(Env& env, std::map<int, TaskLog>& logs, const std::vector<study::TaskStatus>& tasks,
                     const study::Counts& counts, const std::vector<TaskPlace>& places,
                     const std::vector<std::optional<std::size_t>>& where, bool no_prefix)
{
  auto on = [&](std::size_t c, const char* sep) { return places[c].host.empty() ? "" : sep + places[c].host; };
  std::vector<proc::Batch> batches;
  for (std::size_t c = 0; c < places.size(); ++c) {
    batches.emplace_back("study logs");
  }
  std::vector<std::vector<std::pair<int, proc::Handle>>> reads(places.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    if (t.attempts == 0 || i >= where.size() || !where[i] || *where[i] >= places.size()) {
      continue;
    }
    const auto c = *where[i];
    auto& log = logs[t.id];
    if (log.attempt != t.attempts) { // a new attempt (maybe on another cluster): its log starts over
      if (log.attempt != 0) {
        print_task_output(env, log, t.id, "", no_prefix, true);
        env.output.err(fmt::format("rv: task {} runs again (attempt {}{}): its worker ended during attempt {}\n", t.id,
                                   t.attempts, on(c, ", on "), log.attempt));
      }
      log = TaskLog{t.attempts, 0, {}, false};
    }
    if (!log.ended_shown) {
      reads[c].emplace_back(t.id, batches[c].add(proc::remote::read_from_command(
                                      study::task_log(places[c].dir, t.id, t.attempts), log.offset)));
    }
  }
  for (std::size_t c = 0; c < places.size(); ++c) {
    if (reads[c].empty()) {
      continue;
    }
    auto answers = batches[c].run(places[c].env->cluster);
    if (!answers) {
      spdlog::debug("study logs on {}: {} (read again at the next round)", places[c].env->cluster.where(),
                    answers.error().message);
      continue;
    }
    for (const auto& [task, h] : reads[c]) {
      const auto& o = (*answers)[h];
      if (o.ok()) {
        print_task_output(env, logs[task], task, o.out, no_prefix, false);
        logs[task].offset += o.out.size();
      }
    }
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    auto& log = logs[t.id];
    const bool ended = t.state == study::TaskState::done || t.state == study::TaskState::failed;
    if (ended && !log.ended_shown && (log.attempt == t.attempts || t.attempts == 0)) {
      print_task_output(env, log, t.id, "", no_prefix, true);
      log.ended_shown = true;
      const bool placed = i < where.size() && where[i] && *where[i] < places.size();
      env.output.err(fmt::format("rv: task {} {} (exit {}) after {} on job {}{} [{}/{} ended]\n", t.id,
                                 to_string(t.state), exit_text(t), task_time_text(t), t.job_id.empty() ? "-" : t.job_id,
                                 placed ? on(*where[i], " of ") : std::string(), counts.done + counts.failed,
                                 tasks.size()));
    }
  }
}

PoolSide pool_side(PlanRun planned, std::int64_t task_time_s, study::PoolInput in)
{
  PoolSide side;
  side.strategies = study::worker_strategies(planned.plan.strategies, task_time_s, side.dropped);
  in.kinds = study::free_kinds(planned.cluster, side.strategies); // at most the free GPUs the plan saw
  side.pool = study::plan_pool(side.strategies, task_time_s, in);
  side.planned = std::move(planned);
  return side;
}

std::int64_t worker_walltime_s(std::int64_t task_time_s, int per_worker)
{
  return (task_time_s * per_worker + k_worker_margin_s + 59) / 60 * 60;
}

int first_worker_share(int tasks, std::size_t workers)
{
  return std::max(2, study::tasks_per_worker(tasks, std::max<int>(1, static_cast<int>(workers))));
}

void keep_longer_if_better(PoolSide& side, Result<PlanRun> longer, const study::PoolInput& in, std::int64_t task_time_s,
                           int per_worker, std::int64_t walltime_s)
{
  if (!longer) {
    spdlog::info("the plan for workers of {} task(s) ({}) failed: {}; workers of one task", per_worker,
                 format_human_duration(walltime_s), longer.error().message);
    return;
  }
  auto other = pool_side(std::move(*longer), task_time_s, in);
  if (!other.strategies.empty() && !other.pool.submit.empty() &&
      (side.pool.submit.empty() || other.pool.score <= side.pool.score)) {
    side = std::move(other);
    side.pool.notes.push_back(
        fmt::format("each worker asks for {} task(s) of time ({}): it keeps claiming once started", per_worker,
                    format_human_duration(walltime_s)));
  } else {
    side.pool.notes.push_back(fmt::format("workers of one task: the plan for {} task(s) per worker ({}) was expected "
                                          "to end later or cost more",
                                          per_worker, format_human_duration(walltime_s)));
  }
}

void record_slots(RequestRecord& rec, const PoolSide& side)
{
  if (auto& kept = rec.study["workers"]; kept.is_array()) {
    for (auto& w : kept) {
      for (const auto& s : side.strategies) {
        if (w.value("id", "") == s.id) {
          w["slots"] = study::free_slots(side.planned.cluster, s);
        }
      }
    }
  }
}

std::string task_time_text(const study::TaskStatus& t)
{
  return t.started_at > 0 && t.ended_at >= t.started_at ? format_human_duration(t.ended_at - t.started_at) : "-";
}

std::string strategy_of(const RequestRecord& rec, const std::string& job_id)
{
  for (const auto& j : rec.jobs) {
    if (!job_id.empty() && j.job_id == job_id) {
      return j.strategy_id + " " + j.label;
    }
  }
  return "-";
}

std::string exit_text(const study::TaskStatus& t)
{
  if (t.exit_status) {
    return std::to_string(*t.exit_status);
  }
  return t.state == study::TaskState::failed ? "lost" : "-";
}

// What one tending step did.
struct Tended {
  StudyView view;
  int added = 0;        // workers submitted
  bool over = false;    // every task ended (idle workers cancelled), or the study was stopped
  bool stopped = false; // `rv stop`: no view was read
  std::string broken;   // why the pool is not topped up any more (workers fail before any task)
};

// One step of keeping a study going (module comment in the header): read it, top the pool up
// within the limits, and once every task ended cancel the workers still pending.
Result<Tended> tend_study(Env& env, RequestRecord& rec, const model::UserLimits& limits)
{
  Tended t;
  // `rv stop` takes the same lock: it cannot pass between this check and the workers' sbatch, and
  // it reads the record again, so it cancels every worker a top-up recorded.
  RV_TRY(changing, env.requests.hold_changes(rec.id));
  // Stopped (`rv stop REQ`, by this or another rv): no top-up ever again. A record that is gone
  // (its state directory removed) stops the top-up too: a worker submitted for it could never be
  // found or stopped by rv. A background settler whose test had removed its state directory went
  // on submitting workers of a stopped study, into the next tests' runs (test_multi's
  // diagnostics found them).
  auto stored = env.requests.read(rec.id);
  if (!stored || stored->value("state", "") == "cancelled") {
    if (!stored) {
      spdlog::warn("study {}: its record cannot be read ({}): no more workers are submitted", rec.id,
                   stored.error().message);
    }
    rec.state = RequestState::cancelled;
    t.over = true;
    t.stopped = true;
    return t;
  }
  const bool limited = limits.max_submit_jobs || limits.max_jobs || limits.max_gpus;
  RV_TRY(v, read_study(env, rec, limited));
  t.view = std::move(v);
  const int unfinished = t.view.counts.pending + t.view.counts.running;
  if (unfinished > 0 && t.view.barren.size() >= k_max_barren) {
    // Workers fail before claiming anything: more of them would fail the same way (#41 campaign,
    // fs_full: a full remote root had rv -f submit three workers every poll).
    t.broken = fmt::format("{} workers failed before claiming a task (jobs {}): no more are submitted",
                           t.view.barren.size(), text::join(t.view.barren, " "));
    return t;
  }
  if (unfinished > 0) {
    const auto kinds = study::worker_kinds(rec.study);
    std::vector<model::Strategy> strategies;
    for (const auto& k : kinds) {
      strategies.push_back(k.strategy);
    }
    study::PoolInput in;
    in.unfinished = unfinished;
    in.unclaimed = t.view.counts.pending;
    in.workers_alive = alive_workers(rec, t.view.marks.ended);
    in.max_running = t.view.study.max_running;
    in.limits = limits;
    in.other_jobs = t.view.other_jobs.value_or(0);
    in.task_s = median_task_s(t.view.tasks);
    in.kinds = kind_pools(rec, kinds, env.clock.epoch_seconds(), t.view.marks.ended, t.view.tasks);
    in.su_weight = study::su_weight(t.view.study.prefer);
    const auto pool = study::plan_pool(strategies, t.view.study.task_time_s, in);
    cancel_spare_workers(env, rec, kinds, pool);
    if (!pool.submit.empty()) {
      auto added = add_workers(env, rec, kinds, pool.submit);
      if (!added) {
        spdlog::warn("study {}: could not add {} worker(s): {}", rec.id, pool.submit.size(), added.error().message);
      } else {
        t.added = *added;
        spdlog::info("study {}: {} worker(s) added ({} task(s) left, {} worker(s) alive before)", rec.id, *added,
                     unfinished, in.workers_alive);
      }
    }
    return t;
  }
  t.over = true;
  cancel_idle_workers(env, rec);
  return t;
}

void cancel_idle_workers(Env& env, RequestRecord& rec)
{
  std::vector<std::string> idle;
  for (const auto& j : rec.jobs) {
    if (!j.job_id.empty() && j.state == slurm::JobState::pending) {
      idle.push_back(j.job_id);
    }
  }
  if (idle.empty()) {
    return;
  }
  if (auto c = slurm::cancel_jobs(env.cluster, idle, rec.name); !c) {
    spdlog::warn("study {}: could not cancel idle workers {} on {}: {}", rec.id, text::join(idle, " "),
                 env.cluster.where(), c.error().message);
    return;
  }
  for (auto& j : rec.jobs) {
    if (std::find(idle.begin(), idle.end(), j.job_id) != idle.end()) {
      mark_cancelled(j, env.clock.epoch_seconds());
    }
  }
  save(env.requests, rec);
}

std::unexpected<Error> hand_to_background(Env& env, const std::string& id, std::string_view what)
{
  auto bg = env.clusters ? env.clusters->settle_in_background(id)
                         : Result<void>(fail(ErrorCode::generic, "no background rv"));
  env.output.err(bg ? fmt::format("rv: stopped following study {}; it runs on (a background rv {}): rv ps {} shows "
                                  "it, rv stop {} stops it\n",
                                  id, what, id, id)
                    : fmt::format("rv: stopped following study {}; its workers run on, but no background rv {} "
                                  "({}): `rv _settle {}` starts one, rv stop {} stops the study\n",
                                  id, what, bg.error().message, id, id));
  return fail(ErrorCode::interrupted, fmt::format("stopped following study {}", id));
}

// The limits a study's pool respects: the association facts of the record's cluster, as the
// plan read them (kept in the record's study JSON).
model::UserLimits study_limits(const RequestRecord& rec)
{
  model::UserLimits l;
  const auto& lim = rec.study.value("limits", nlohmann::json::object());
  if (auto v = lim.find("max_submit_jobs"); v != lim.end() && v->is_number_integer()) {
    l.max_submit_jobs = v->get<int>();
  }
  if (auto v = lim.find("max_jobs"); v != lim.end() && v->is_number_integer()) {
    l.max_jobs = v->get<int>();
  }
  if (auto v = lim.find("max_gpus"); v != lim.end() && v->is_number_integer()) {
    l.max_gpus = v->get<int>();
  }
  return l;
}

nlohmann::json limits_json(const model::UserLimits& l)
{
  auto opt = [](const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  return {{"max_submit_jobs", opt(l.max_submit_jobs)}, {"max_jobs", opt(l.max_jobs)}, {"max_gpus", opt(l.max_gpus)}};
}

std::string final_table(const RequestRecord& rec, const StudyView& view)
{
  std::size_t width = std::string_view("STRATEGY").size();
  for (const auto& t : view.tasks) {
    width = std::max(width, strategy_of(rec, t.job_id).size());
  }
  std::string table =
      fmt::format("{:<6} {:<8} {:<{}} {:>8} {:>5}\n", "TASK", "STATE", "STRATEGY", width, "TIME", "EXIT");
  for (const auto& t : view.tasks) {
    table += fmt::format("{:<6} {:<8} {:<{}} {:>8} {:>5}\n", t.id, to_string(t.state), strategy_of(rec, t.job_id),
                         width, task_time_text(t), exit_text(t));
  }
  return table + fmt::format("study {}: {}\n", rec.id, study_counts_text(view));
}

// Follows a submitted study to its end: every started task's new output (one round trip for all),
// each task's end, the pool topped up; then the table. 0 only when every task succeeded.
Result<int> follow_study(Env& env, OwnedRequest& owner, bool no_prefix)
{
  auto& rec = owner.rec;
  const auto dir = study::tasks_dir(rec.remote_root, rec.id);
  const auto limits = study_limits(rec);
  // Tending: `rv ps` starts no background rv meanwhile. Released before one is started on Ctrl-C.
  auto tending = store::FileLock::try_acquire(tending_lock_path(env.requests, rec.id));
  std::map<int, TaskLog> logs;
  slurm::Backoff backoff(slurm::Backoff::racing());
  StudyView view;
  while (true) {
    if (interrupt_signal() != 0) {
      owner.release();
      if (tending) {
        tending->reset(); // the background rv takes the lock
      }
      return hand_to_background(env, rec.id, "tops its workers up");
    }
    RV_TRY(tended, tend_study(env, rec, limits));
    if (tended.stopped) {
      owner.release();
      return fail(ErrorCode::interrupted, fmt::format("study {} was stopped (rv stop)", rec.id));
    }
    view = std::move(tended.view);
    if (!tended.broken.empty()) {
      owner.finish(RequestState::failed);
      const auto& job = view.barren.back();
      return fail(ErrorCode::generic, fmt::format("study {}: {}", rec.id, tended.broken),
                  fmt::format("rv logs --err {} shows why job {} failed; rv ps {} shows the tasks", job, job, rec.id));
    }
    const std::vector<TaskPlace> here = {{&env, dir, {}}};
    show_task_round(env, logs, view.tasks, view.counts, here,
                    std::vector<std::optional<std::size_t>>(view.tasks.size(), std::size_t{0}), no_prefix);
    if (tended.over) {
      break;
    }
    if (env.output.terminal().tty) {
      env.output.status({fmt::format("study {}: {}", rec.id, study_counts_text(view))});
    }
    env.clock.sleep_for(backoff.next());
  }
  if (env.output.terminal().tty) {
    env.output.status({});
  }
  env.output.err(final_table(rec, view));
  const bool all_ok = view.counts.failed == 0;
  owner.finish(all_ok ? RequestState::done : RequestState::failed);
  return all_ok ? 0 : 1;
}

} // namespace study_parts

Result<StudyView> read_study(Env& env, RequestRecord& rec, bool other_jobs)
{
  StudyView v;
  RV_TRY(st, study::study_from_json(rec.study));
  v.study = std::move(st);
  if (!rec.pruned_at.empty()) { // rv ps removed the task directory with the request's remote state
    return fail(
        ErrorCode::usage,
        fmt::format("study {}'s tasks were removed from the cluster at {} (request_keep)", rec.id, rec.pruned_at),
        "rv ps -a --json keeps what the record knows; raise request_keep to keep studies longer");
  }
  std::vector<RequestRecord> one = {rec};
  RV_TRY(report, refresh_and_reap(env.cluster, env.clock, env.requests, one));
  (void)report;
  rec = std::move(one.front());
  std::set<std::string> alive;
  for (const auto& j : rec.jobs) {
    const auto s = j.state;
    if (!j.job_id.empty() && !slurm::is_terminal(s)) {
      alive.insert(j.job_id);
      (slurm::is_started(s) ? v.workers_running : v.workers_pending) += 1;
    }
  }
  proc::Batch batch("study tasks");
  const auto dir = study::tasks_dir(rec.remote_root, rec.id);
  const auto listed = batch.add(study::task_listing_command(dir));
  const auto marked = batch.add(study::worker_marks_command(dir));
  std::optional<proc::Handle> mine;
  if (other_jobs) {
    mine = batch.add(slurm::patient_command(slurm::my_jobs_argv()));
  }
  RV_TRY(answers, batch.run(env.cluster));
  const auto& listing = answers[listed];
  if (mine) {
    auto jobs = answers[*mine].ok()
                    ? slurm::parse_squeue(answers[*mine].out, slurm::request_jobs_format)
                    : Result<std::vector<slurm::SqueueJob>>(fail(ErrorCode::io, text::first_line(answers[*mine].err)));
    if (jobs) {
      v.other_jobs = slurm::jobs_not_of(*jobs, rec.id);
    } else {
      spdlog::warn("study {}: could not list your other jobs (they count as none against the limits): {}", rec.id,
                   jobs.error().message);
    }
  }
  if (!listing.ok()) {
    return fail(ErrorCode::io, fmt::format("cannot read the tasks of study {} on {}: {}", rec.id, env.cluster.where(),
                                           text::first_line(listing.err)));
  }
  v.tasks = study::task_statuses(v.study, listing.out, alive);
  if (answers[marked].ok()) {
    v.marks = study::parse_worker_marks(answers[marked].out);
  }
  v.offers = study::open_offers(listing.out);
  const auto claimers = study::claimer_jobs(listing.out);
  for (const auto& j : rec.jobs) {
    if (!j.job_id.empty() && j.state == slurm::JobState::failed && !claimers.contains(j.job_id)) {
      v.barren.push_back(j.job_id);
    }
  }
  v.counts = study::count(v.tasks);
  // Every task ended and no worker lives: the study is over, whoever reads it first says so (across
  // clusters, one cluster's view is not the study's: the coordinator says it).
  if (!v.study.offers && v.counts.pending + v.counts.running == 0 && alive.empty() && !is_final_state(rec.state)) {
    rec.state = v.counts.failed == 0 ? RequestState::done : RequestState::failed;
    save(env.requests, rec);
  }
  return v;
}

std::string study_counts_text(const StudyView& v)
{
  return fmt::format("{} done, {} running, {} pending, {} failed of {} task(s); workers: {} running, {} pending",
                     v.counts.done, v.counts.running, v.counts.pending, v.counts.failed, v.tasks.size(),
                     v.workers_running, v.workers_pending);
}

std::vector<std::string> study_task_lines(const RequestRecord& rec, const StudyView& v)
{
  using namespace study_parts; // here, not for the file: a unity build merges files
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.tasks.size(); ++i) {
    const auto& t = v.tasks[i];
    const auto& cmd = i < v.study.tasks.size() ? v.study.tasks[i].command : std::string();
    out.push_back(fmt::format("[{}] {:<8} attempt {} job {:<9} {:>8} exit {:<4} {}", t.id, to_string(t.state),
                              t.attempts, t.job_id.empty() ? "-" : t.job_id, task_time_text(t), exit_text(t),
                              cmd.size() > 60 ? cmd.substr(0, 57) + "..." : cmd));
  }
  (void)rec;
  return out;
}

Result<int> show_task_log(Env& env, RequestRecord& rec, int task, bool follow, int tail)
{
  RV_TRY(v, read_study(env, rec));
  auto it = std::find_if(v.tasks.begin(), v.tasks.end(), [&](const study::TaskStatus& t) { return t.id == task; });
  if (it == v.tasks.end()) {
    std::string ids;
    for (std::size_t i = 0; i < v.tasks.size() && i < 8; ++i) {
      ids += (i ? "," : "") + std::to_string(v.tasks[i].id);
    }
    return fail(ErrorCode::usage, fmt::format("study {} has no task {}", rec.id, task),
                fmt::format("its tasks: {}{} (rv ps {} lists them)", ids, v.tasks.size() > 8 ? ",..." : "", rec.id));
  }
  const auto dir = study::tasks_dir(rec.remote_root, rec.id);
  slurm::Backoff backoff(slurm::Backoff::waiting());
  while (it->attempts == 0) {
    if (!follow) {
      return fail(ErrorCode::usage, fmt::format("task {} of study {} has not started yet", task, rec.id),
                  fmt::format("rv logs -f {}/{} waits for it", rec.id, task));
    }
    if (interrupt_signal() != 0) {
      return fail(ErrorCode::interrupted, fmt::format("stopped waiting for task {}", task));
    }
    env.clock.sleep_for(backoff.next());
    RV_TRY(again, read_study(env, rec));
    v = std::move(again);
    it = std::find_if(v.tasks.begin(), v.tasks.end(), [&](const study::TaskStatus& t) { return t.id == task; });
  }
  const auto path = study::task_log(dir, task, it->attempts);
  if (tail >= 0) {
    auto c = proc::remote::last_lines_command(path, tail);
    c.on_stdout = [&](std::string_view s) { env.output.out(s); };
    RV_TRY(o, env.cluster.run(c));
    return o.ok() ? 0 : 1;
  }
  std::size_t offset = 0;
  while (true) {
    RV_TRY(o, env.cluster.run(proc::remote::read_from_command(path, offset)));
    if (o.ok()) {
      env.output.out(o.out);
      offset += o.out.size();
      if (o.out.size() == proc::remote::k_log_chunk) {
        continue;
      }
    }
    const bool ended = it->state != study::TaskState::running;
    if (!follow || ended || interrupt_signal() != 0) {
      return it->exit_status ? *it->exit_status : 0;
    }
    env.clock.sleep_for(std::chrono::seconds(1));
    RV_TRY(again, read_study(env, rec));
    v = std::move(again);
    it = std::find_if(v.tasks.begin(), v.tasks.end(), [&](const study::TaskStatus& t) { return t.id == task; });
    if (it->attempts != 0 && study::task_log(dir, task, it->attempts) != path) {
      return show_task_log(env, rec, task, follow, tail); // a new attempt: its own log
    }
  }
}

Result<int> settle_study(Env& env, const std::string& request_id)
{
  using namespace study_parts; // here, not for the file: a unity build merges files
  RV_TRY(j, env.requests.read(request_id));
  RV_TRY(rec, request_from_json(j));
  RV_TRY(tending, store::FileLock::try_acquire(tending_lock_path(env.requests, request_id)));
  if (!tending) {
    spdlog::info("study {}: another rv tends it", request_id);
    return 0;
  }
  if (is_study_across(rec)) {
    return settle_study_across(env, rec);
  }
  const auto limits = study_limits(rec);
  slurm::Backoff backoff({std::chrono::milliseconds(2000), std::chrono::milliseconds(15000), 1.5});
  const auto dir = study::tasks_dir(rec.remote_root, rec.id);
  for (int failures = 0;;) {
    auto tended = tend_study(env, rec, limits);
    bool prompt = false; // tasks wait for a worker, and a worker may start or end: wait for its mark
    if (!tended) {
      spdlog::warn("study {}: {}", rec.id, tended.error().message);
      if (++failures >= 20) {
        spdlog::warn("study {}: stopped after 20 failed rounds; `rv run -f` is not needed: rv ps {} shows it", rec.id,
                     rec.id);
        return 1;
      }
    } else if (!tended->broken.empty()) {
      spdlog::error("study {}: {}", rec.id, tended->broken);
      rec.state = RequestState::failed;
      save(env.requests, rec);
      return 1;
    } else if (tended->stopped) {
      spdlog::info("study {}: stopped (rv stop): no more workers", rec.id);
      return 0;
    } else if (tended->over) {
      spdlog::info("study {}: {}", rec.id, study_counts_text(tended->view));
      rec.state = tended->view.counts.failed == 0 ? RequestState::done : RequestState::failed;
      save(env.requests, rec);
      return tended->view.counts.failed == 0 ? 0 : 1;
    } else {
      failures = 0;
      const auto& v = tended->view;
      prompt = v.marks.read && v.counts.pending > 0 && v.workers_pending + v.workers_running > 0;
    }
    if (interrupt_signal() != 0) {
      return 130;
    }
    const auto pause = backoff.next();
    if (prompt) {
      // One round trip that waits on the cluster for a worker's start or end mark (the login node
      // reads the task directory each second; slurmctld is asked nothing), at most the poll's pause:
      // a finished worker's tasks get a new worker within a second or two, not at the next poll.
      const int seconds = static_cast<int>(std::max<std::int64_t>(1, pause.count() / 1000));
      if (auto w = env.cluster.run(study::worker_wait_command(dir, tended->view.marks.count(), seconds));
          w && w->ok()) {
        continue;
      }
    }
    env.clock.sleep_for(pause);
  }
}

void tend_untended_studies(Env& env)
{
  if (!env.clusters) {
    return;
  }
  auto all = load_requests(env.requests);
  if (!all) {
    return;
  }
  for (const auto& r : *all) {
    if (r.study.is_null() || is_final_state(r.state) || r.state == RequestState::submitting ||
        (is_study_across(r) && r.id != study_coordinator(r)) ||
        store::lock_held(tending_lock_path(env.requests, r.id))) {
      continue;
    }
    if (auto bg = env.clusters->settle_in_background(r.id); !bg) {
      env.output.err(fmt::format("rv: study {} has no rv tending it, and none could be started ({}): `rv _settle {}` "
                                 "starts one\n",
                                 r.id, bg.error().message, r.id));
    } else {
      env.output.err(fmt::format("rv: study {} had no rv tending it (rv was stopped before its end): a background rv "
                                 "tends it again\n",
                                 r.id));
    }
  }
}

Result<int> run_study(Env& env, const StudyOrder& order, const std::vector<std::string>& command, bool follow)
{
  using namespace study_parts; // here, not for the file: a unity build merges files
  const std::string line = command_line_of(command);
  // A task's --time keeps its seconds (`--time 10s`: 10 s per task, in workers of a minute or more).
  RV_TRY(st, study::make_study(order.flags, line, order.task_time_s > 0 ? order.task_time_s : order.request.time_s));
  if (env.settings.hosts.size() > 1) { // offered to the clusters whose workers run (app/run/study_across.hpp)
    return run_study_across(env, order, std::move(st), line, follow);
  }
  RV_TRY(base, make_plan(env, order.request, order.plan_options));
  study::PoolInput in;
  in.unfinished = static_cast<int>(st.tasks.size());
  in.max_running = st.max_running;
  in.limits = base.cluster.limits;
  in.su_weight = study::su_weight(st.prefer);
  if (in.limits.max_submit_jobs || in.limits.max_jobs || in.limits.max_gpus) {
    in.other_jobs = count_my_jobs(env);
  }
  auto side = pool_side(std::move(base), st.task_time_s, in);
  const int n = static_cast<int>(st.tasks.size());
  if (n > 1 && !side.strategies.empty()) {
    const int per_worker = first_worker_share(n, side.pool.submit.size());
    auto longer = order.request;
    longer.time_s = worker_walltime_s(st.task_time_s, per_worker);
    keep_longer_if_better(side, make_plan(env, longer, order.plan_options), in, st.task_time_s, per_worker,
                          longer.time_s);
  }
  const auto& planned = side.planned;
  const auto& strategies = side.strategies;
  const auto& dropped = side.dropped;
  const auto& pool = side.pool;
  if (order.dry_run) {
    if (env.json) {
      nlohmann::json workers = nlohmann::json::array();
      for (auto k : pool.submit) {
        workers.push_back(strategies[k].id);
      }
      env.output.out(store::dump_for_display({{"plan", strategy::to_json(planned.plan)},
                                              {"study", study::to_json(st)},
                                              {"workers", workers},
                                              {"target", pool.target},
                                              {"notes", pool.notes},
                                              {"dropped", dropped}}) +
                     "\n");
      return 0;
    }
    RV_TRY(shown, dry_run(env, planned));
    (void)shown;
    std::string out = fmt::format(
        "\nstudy: {} task(s), a task's --time {}, {} attempt(s) each{}{}; the pool prefers {}\n", st.tasks.size(),
        format_human_duration(st.task_time_s), st.retries + 1, st.retry_failed ? " (failed tasks too)" : "",
        st.max_running > 0 ? fmt::format(", at most {} at once", st.max_running) : "", study::to_string(st.prefer));
    for (const auto& t : st.tasks) {
      out += fmt::format("  [{}] {}\n", t.id, t.command);
    }
    for (const auto& d : dropped) {
      out += "  not a worker: " + d + "\n";
    }
    out += pool_text(strategies, pool);
    env.output.out(out);
    return 0;
  }
  if (strategies.empty() || pool.submit.empty()) {
    // Why, in the one line: each strategy the plan had and why it cannot be a worker, or that the
    // plan had none (a study's CI run once failed here with no word of which).
    const auto why = !strategies.empty() ? std::string("the limits leave no room for a worker")
                     : dropped.empty()   ? std::string("no strategy can run a study's task: the plan has none")
                                         : "no strategy can run a study's task (one node, a walltime of one task): " +
                                             text::join(dropped, "; ");
    return fail(ErrorCode::usage, why, "rv run --dry-run --array ... shows the strategies, the limits and why");
  }
  RV_TRY(smart, order.prepare(env));
  auto extras = smart.extras;
  extras.study = std::make_shared<const study::Study>(st);
  extras.followed = follow;
  int next_worker = 1;
  auto first = workers_plan(planned, strategies, pool.submit, next_worker);
  RV_TRY(launched, submit_request(env, first, line, smart.workdir, "run", extras));
  launched.rec.study["limits"] = limits_json(planned.cluster.limits);
  record_slots(launched.rec, side);
  save(env.requests, launched.rec);
  if (follow) {
    return follow_study(env, launched, order.flags.no_prefix);
  }
  launched.release(); // the workers run on without rv; the background rv tops the pool up
  auto bg = env.clusters ? env.clusters->settle_in_background(launched.rec.id)
                         : Result<void>(fail(ErrorCode::generic, "no background rv"));
  if (!bg) {
    spdlog::warn("could not start the background rv that tops study {}'s workers up: {}; `rv run -f` is not "
                 "needed: the workers run on, a dead one's task waits for the next worker",
                 launched.rec.id, bg.error().message);
  }
  if (env.json) {
    env.output.out(store::dump_for_display(to_json(launched.rec)) + "\n");
  } else if (env.quiet) {
    env.output.out(launched.rec.id + "\n");
  } else {
    const auto& id = launched.rec.id;
    env.output.out(fmt::format("study {}: {} task(s) on {} worker(s)\n", id, st.tasks.size(), pool.submit.size()) +
                   text::next_steps({{"rv ps " + id, "the tasks"},
                                     {fmt::format("rv logs {}/{}", id, st.tasks.front().id), "a task's output"},
                                     {"rv stop " + id, "stop every worker"}}));
  }
  return 0;
}

} // namespace rv::app
