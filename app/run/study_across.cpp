#include "app/run/study_across.hpp"

#include "app/clusters.hpp"
#include "app/request/reap.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "app/run/launch/submit.hpp"
#include "app/run/plan/across_plan.hpp"
#include "app/run/plan/planning.hpp"
#include "app/run/plan/study_offers.hpp"
#include "app/run/study_parts.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/process/batch.hpp"
#include "core/process/remote_files.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/record_store.hpp"
#include "core/text.hpp"
#include "slurm/backoff.hpp"
#include "slurm/job_state.hpp"
#include "slurm/monitor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace rv::app {
namespace {

// Rounds in a row that could not read every cluster before the coordinator gives up (saying so).
constexpr int k_max_failed_rounds = 20;

// One field (`id` or `host`) of every member of a study across clusters, in the order the hosts
// were named (the first is the coordinator).
std::vector<std::string> across_members(const RequestRecord& rec, const char* field)
{
  std::vector<std::string> out;
  if (is_study_across(rec)) {
    for (const auto& m : rec.study["across"].value("members", nlohmann::json::array())) {
      out.push_back(m.value(field, ""));
    }
  }
  return out;
}

// Every member, the coordinator first; fails when the coordinator's record is gone.
Result<std::vector<RaceMember>> load_study_members(Env& env, const RequestRecord& any)
{
  const auto ids = across_members(any, "id");
  RV_TRY(members, load_members(env, ids, "study " + study_coordinator(any)));
  if (members.empty() || members.front().rec.id != study_coordinator(any)) {
    return fail(ErrorCode::generic, fmt::format("study {}: its coordinator's record cannot be read", any.id),
                "rv ps -a lists the requests this machine knows");
  }
  return members;
}

// Every member's view and the tasks merged (one listing per cluster, one after the other).
Result<AcrossStudyView> read_members(std::vector<RaceMember>& members)
{
  AcrossStudyView v;
  const auto hosts = across_members(members.front().rec, "host");
  std::vector<std::vector<study::TaskStatus>> statuses;
  for (std::size_t c = 0; c < members.size(); ++c) {
    auto& m = members[c];
    RV_TRY(one, read_study(*m.env, m.rec));
    statuses.push_back(one.tasks);
    v.merged.workers_pending += one.workers_pending;
    v.merged.workers_running += one.workers_running;
    v.merged.barren.insert(v.merged.barren.end(), one.barren.begin(), one.barren.end());
    v.per.push_back(std::move(one));
    v.records.push_back(m.rec);
    v.hosts.push_back(c < hosts.size() ? hosts[c] : m.rec.destination);
  }
  v.merged.study = v.per.front().study;
  for (auto& p : study::merge_statuses(statuses)) {
    v.merged.tasks.push_back(p.status);
    v.where.push_back(p.cluster);
  }
  v.merged.counts = study::count(v.merged.tasks);
  return v;
}

// Cancels the pending workers of every member (nothing left to offer, or the study is over).
void cancel_pending_workers(std::vector<RaceMember>& members)
{
  for (auto& m : members) {
    study_parts::cancel_idle_workers(*m.env, m.rec); // the members' Envs share the stores and the clock
  }
}

struct TendedAcross {
  AcrossStudyView view;
  bool over = false;
  bool stopped = false;
  std::string broken;
};

// The record's offers: task -> {cluster, attempt, state}, state "offered" or "revoking".
nlohmann::json& offers_of(RequestRecord& coordinator)
{
  auto& across = coordinator.study["across"];
  if (!across.contains("offers") || !across["offers"].is_object()) {
    across["offers"] = nlohmann::json::object();
  }
  return across["offers"];
}

// Makes and takes back offers (the record first, then the clusters), one round trip per cluster.
void coordinate_offers(Env& env, std::vector<RaceMember>& members, const AcrossStudyView& view)
{
  auto& coordinator = members.front().rec;
  auto& offers = offers_of(coordinator);
  const std::size_t n = members.size();
  std::map<int, std::size_t> index; // task id -> its place in the study's order
  for (std::size_t i = 0; i < view.merged.tasks.size(); ++i) {
    index[view.merged.tasks[i].id] = i;
  }
  std::vector<std::vector<study::OfferStep>> steps(n);
  std::vector<study::Offer> open;
  std::set<int> held;
  // What the record says against what the clusters say: an attempt taken ends the offer's record
  // (the attempt is the truth now); a revocation not yet won is tried again; an offer recorded but
  // not on its cluster (rv stopped between the two) is made again.
  for (auto it = offers.begin(); it != offers.end();) {
    const int task = std::stoi(it.key());
    const auto c = it->value("cluster", std::size_t{0});
    const int k = it->value("attempt", 1);
    const bool revoking = it->value("state", "offered") == "revoking";
    const auto at = index.find(task);
    if (c >= n || at == index.end() || view.per[c].tasks[at->second].attempts >= k) {
      it = offers.erase(it);
      continue;
    }
    held.insert(task);
    if (revoking) {
      steps[c].push_back({study::OfferOp::revoke, task, k});
    } else {
      open.push_back({task, k, c});
      if (!view.per[c].offers.contains(task)) {
        steps[c].push_back({study::OfferOp::offer, task, k});
      }
    }
    ++it;
  }
  study::OfferInput in;
  in.open = open;
  in.clusters.resize(n);
  for (std::size_t i = 0; i < view.merged.tasks.size(); ++i) {
    const auto& t = view.merged.tasks[i];
    if (t.state == study::TaskState::pending && !held.contains(t.id)) {
      in.waiting.emplace_back(t.id, t.attempts + 1);
    }
    if (t.state == study::TaskState::running && view.where[i]) {
      in.clusters[*view.where[i]].busy += 1;
    }
  }
  for (std::size_t c = 0; c < n; ++c) {
    in.clusters[c].running = view.per[c].workers_running;
  }
  const auto plan = study::plan_offers(in);
  for (const auto& o : plan.make) {
    offers[std::to_string(o.task)] = {{"cluster", o.cluster}, {"attempt", o.attempt}, {"state", "offered"}};
    steps[o.cluster].push_back({study::OfferOp::offer, o.task, o.attempt});
  }
  if (!plan.make.empty()) {
    coordinator.study["across"]["drained"] = false; // an offer made removes its cluster's .drained
  }
  for (const auto& o : plan.revoke) {
    offers[std::to_string(o.task)]["state"] = "revoking";
    steps[o.cluster].push_back({study::OfferOp::revoke, o.task, o.attempt});
  }
  save(env.requests, coordinator); // the intent before any rename: a restarted rv applies it again
  // save() may replace the record with the merged one (a concurrent rv's fields taken in): the
  // offers are looked up again, never through a reference from before it.
  bool changed = false;
  for (std::size_t c = 0; c < n; ++c) {
    if (steps[c].empty()) {
      continue;
    }
    auto& m = members[c];
    auto o = m.env->cluster.run(study::offer_ops_command(study::tasks_dir(m.rec.remote_root, m.rec.id), steps[c]));
    if (!o || !o->ok()) {
      spdlog::warn("study {}: offers on {} not applied now: {}", coordinator.id, m.env->cluster.where(),
                   !o ? o.error().message : text::first_line(o->err));
      continue;
    }
    for (const auto& [task, word] : study::parse_offer_ops(o->out)) {
      auto& now = offers_of(coordinator);
      auto rec = now.find(std::to_string(task));
      if (rec == now.end()) {
        continue;
      }
      if ((word == "revoked" || word == "gone") && rec->value("state", "") == "revoking") {
        spdlog::info("study {}: task {}'s offer taken back from {}", coordinator.id, task, m.env->cluster.where());
        now.erase(rec);
        changed = true;
      } else if (word == "offered") {
        spdlog::info("study {}: task {} (attempt {}) offered on {}", coordinator.id, task, rec->value("attempt", 0),
                     m.env->cluster.where());
      } else if (word == "error") {
        spdlog::warn("study {}: task {}'s offer on {} failed; tried again at the next poll", coordinator.id, task,
                     m.env->cluster.where());
      }
    }
  }
  if (changed) {
    save(env.requests, coordinator);
  }
}

// Nothing is left to offer (every unfinished task is on a worker): each cluster's workers are told
// so (`tasks/.drained`), and one that finds no offer ends at once instead of waiting, billed, for
// one (k_offer_wait_s). Once per drain: the record says it was done until an offer is made again.
void drain_offers(Env& env, std::vector<RaceMember>& members)
{
  auto& coordinator = members.front().rec;
  if (coordinator.study["across"].value("drained", false)) {
    return;
  }
  bool all = true;
  for (auto& m : members) {
    auto o = m.env->cluster.run(
        study::offer_ops_command(study::tasks_dir(m.rec.remote_root, m.rec.id), {{study::OfferOp::drain, 0, 0}}));
    if (!o || !o->ok() || o->out.find("- drained") == std::string::npos) {
      spdlog::warn("study {}: could not tell the workers on {} that nothing is left to offer: {} (they end after "
                   "{} s without one)",
                   coordinator.id, m.env->cluster.where(), !o ? o.error().message : text::first_line(o->err),
                   study::k_offer_wait_s);
      all = false;
    }
  }
  if (all) {
    coordinator.study["across"]["drained"] = true;
    save(env.requests, coordinator);
  }
}

// Tops the pools up: one model over every cluster's strategies (plan_pool_across) for the unfinished
// tasks, capped by %K, less the workers alive on every cluster, each cluster within its own limits.
void top_up(std::vector<RaceMember>& members, const AcrossStudyView& view, int unfinished)
{
  std::vector<study::ClusterPool> pools;
  std::vector<std::vector<study::WorkerKind>> kinds;
  for (std::size_t c = 0; c < members.size(); ++c) {
    auto& m = members[c];
    kinds.push_back(study::worker_kinds(m.rec.study));
    study::ClusterPool cp;
    for (const auto& k : kinds.back()) {
      cp.strategies.push_back(k.strategy);
    }
    cp.in.unfinished = unfinished;
    cp.in.workers_alive = study_parts::alive_workers(m.rec);
    cp.in.max_running = view.merged.study.max_running;
    cp.in.limits = study_parts::study_limits(m.rec);
    cp.in.unclaimed = view.merged.counts.pending;
    cp.in.kinds = study_parts::kind_pools(m.rec, kinds.back(), m.env->clock.epoch_seconds());
    cp.in.su_weight = study::su_weight(view.merged.study.prefer);
    cp.su_weight = m.env->settings.su_weight(c < view.hosts.size() ? view.hosts[c] : m.rec.destination);
    pools.push_back(std::move(cp));
  }
  const auto spread = study::plan_pool_across(pools, view.merged.study.task_time_s);
  for (std::size_t c = 0; c < members.size(); ++c) {
    if (spread[c].empty()) {
      continue;
    }
    auto& m = members[c];
    auto added = study_parts::add_workers(*m.env, m.rec, kinds[c], spread[c]);
    if (!added) {
      spdlog::warn("study {}: could not add {} worker(s) on {}: {}", m.rec.id, spread[c].size(), m.env->cluster.where(),
                   added.error().message);
    } else {
      spdlog::info("study {}: {} worker(s) added on {} ({} task(s) left)", m.rec.id, *added, m.env->cluster.where(),
                   unfinished);
    }
  }
}

// One step of coordinating (under the coordinator's lock, which `rv stop` takes too): read every
// cluster, make and take back offers, top the pools up; once every task ended, cancel the workers
// still pending and record the end in every member.
Result<TendedAcross> tend_across(Env& env, std::vector<RaceMember>& members)
{
  TendedAcross t;
  auto& coordinator = members.front().rec;
  RV_TRY(changing, env.requests.hold_changes(coordinator.id));
  auto stored = env.requests.read(coordinator.id);
  if (!stored || stored->value("state", "") == "cancelled") {
    if (!stored) {
      spdlog::warn("study {}: its record cannot be read ({}): no more offers or workers", coordinator.id,
                   stored.error().message);
    }
    t.over = true;
    t.stopped = true;
    return t;
  }
  if (auto fresh = request_from_json(*stored); fresh) {
    coordinator = std::move(*fresh);
    coordinator.base = *stored;
  }
  RV_TRY(view, read_members(members));
  const int unfinished = view.merged.counts.pending + view.merged.counts.running;
  if (unfinished == 0) {
    t.over = true;
    cancel_pending_workers(members);
    const auto end = view.merged.counts.failed == 0 ? RequestState::done : RequestState::failed;
    for (auto& m : members) {
      if (!is_final_state(m.rec.state)) {
        m.rec.state = end;
        save(env.requests, m.rec);
      }
    }
    t.view = std::move(view);
    return t;
  }
  coordinate_offers(env, members, view);
  if (view.merged.barren.size() >= k_max_barren) {
    t.broken = fmt::format("{} workers failed before claiming a task (jobs {}): no more are submitted",
                           view.merged.barren.size(), text::join(view.merged.barren, " "));
    t.view = std::move(view);
    return t;
  }
  // Nothing left to offer (every unfinished task is on a worker): the pending workers would get
  // nothing; a task lost later brings new ones.
  const bool nothing_to_offer =
      offers_of(coordinator).empty() && std::none_of(view.merged.tasks.begin(), view.merged.tasks.end(),
                                                     [](auto& s) { return s.state == study::TaskState::pending; });
  if (nothing_to_offer) {
    cancel_pending_workers(members);
    drain_offers(env, members);
  } else {
    top_up(members, view, unfinished);
  }
  t.view = std::move(view);
  return t;
}

std::string strategy_across(const AcrossStudyView& v, std::size_t i)
{
  if (!v.where[i]) {
    return "-";
  }
  const auto c = *v.where[i];
  const auto& job_id = v.merged.tasks[i].job_id;
  for (const auto& j : v.records[c].jobs) {
    if (!job_id.empty() && j.job_id == job_id) {
      return v.hosts[c] + " " + j.strategy_id + " " + j.label;
    }
  }
  return v.hosts[c];
}

std::string final_table_across(const std::string& id, const AcrossStudyView& v)
{
  std::size_t width = std::string_view("CLUSTER STRATEGY").size();
  for (std::size_t i = 0; i < v.merged.tasks.size(); ++i) {
    width = std::max(width, strategy_across(v, i).size());
  }
  std::string table =
      fmt::format("{:<6} {:<8} {:<{}} {:>8} {:>5}\n", "TASK", "STATE", "CLUSTER STRATEGY", width, "TIME", "EXIT");
  for (std::size_t i = 0; i < v.merged.tasks.size(); ++i) {
    const auto& t = v.merged.tasks[i];
    table += fmt::format("{:<6} {:<8} {:<{}} {:>8} {:>5}\n", t.id, to_string(t.state), strategy_across(v, i), width,
                         study_parts::task_time_text(t), study_parts::exit_text(t));
  }
  return table + fmt::format("study {}: {}\n", id, study_counts_text(v.merged));
}

// Follows a study across clusters to its end (as follow_study does on one cluster): every started
// task's new output, read on the cluster of its latest attempt; the offers and pools tended at
// every poll; then the table. 0 only when every task succeeded.
Result<int> follow_across(Env& env, std::vector<Launched>& owners, std::vector<RaceMember>& members, bool no_prefix)
{
  const auto& id = members.front().rec.id;
  // Tending: `rv ps` starts no background rv meanwhile. Released before one is started on Ctrl-C.
  auto tending = store::FileLock::try_acquire(tending_lock_path(env.requests, id));
  std::map<int, study_parts::TaskLog> logs;
  slurm::Backoff backoff(slurm::Backoff::racing());
  AcrossStudyView view;
  int failures = 0;
  auto hand_back = [&](std::optional<RequestState> end) {
    for (std::size_t c = 0; c < owners.size() && c < members.size(); ++c) {
      owners[c].rec = members[c].rec;
      if (end) {
        owners[c].finish(*end);
      } else {
        owners[c].release();
      }
    }
  };
  while (true) {
    if (interrupt_signal() != 0) {
      hand_back(std::nullopt);
      if (tending) {
        tending->reset(); // the background rv takes the lock
      }
      // The study needs its coordinator: a background rv takes over (as without -f).
      return study_parts::hand_to_background(env, id, "offers its tasks");
    }
    auto tended = tend_across(env, members);
    if (!tended) { // a cluster that does not answer: the round is tried again whole
      spdlog::warn("study {}: {} (tried again at the next poll)", id, tended.error().message);
      if (++failures >= k_max_failed_rounds) {
        hand_back(std::nullopt);
        return fail(tended.error().code,
                    fmt::format("study {}: {} rounds failed in a row: {}", id, failures, tended.error().message),
                    fmt::format("the workers run on; rv _settle {} coordinates it again, rv stop {} stops it", id, id));
      }
      env.clock.sleep_for(backoff.next());
      continue;
    }
    failures = 0;
    if (tended->stopped) {
      hand_back(std::nullopt);
      return fail(ErrorCode::interrupted, fmt::format("study {} was stopped (rv stop)", id));
    }
    view = std::move(tended->view);
    if (!tended->broken.empty()) {
      hand_back(RequestState::failed);
      const auto& job = view.merged.barren.back();
      return fail(ErrorCode::generic, fmt::format("study {}: {}", id, tended->broken),
                  fmt::format("rv logs --err {} shows why job {} failed; rv ps {} shows the tasks", job, job, id));
    }
    std::vector<study_parts::TaskPlace> places;
    for (std::size_t c = 0; c < members.size(); ++c) {
      places.push_back({members[c].env, study::tasks_dir(members[c].rec.remote_root, members[c].rec.id),
                        c < view.hosts.size() ? view.hosts[c] : members[c].env->cluster.where()});
    }
    study_parts::show_task_round(env, logs, view.merged.tasks, view.merged.counts, places, view.where, no_prefix);
    if (tended->over) {
      break;
    }
    if (env.output.terminal().tty) {
      env.output.status({fmt::format("study {}: {}", id, study_counts_text(view.merged))});
    }
    env.clock.sleep_for(backoff.next());
  }
  if (env.output.terminal().tty) {
    env.output.status({});
  }
  env.output.err(final_table_across(id, view));
  const bool all_ok = view.merged.counts.failed == 0;
  hand_back(all_ok ? RequestState::done : RequestState::failed);
  return all_ok ? 0 : 1;
}

} // namespace

bool is_study_across(const RequestRecord& rec)
{
  return rec.study.is_object() && rec.study.contains("across") && rec.study["across"].is_object();
}

std::string study_coordinator(const RequestRecord& rec)
{
  const auto ids = across_members(rec, "id");
  return ids.empty() ? std::string() : ids.front();
}

Result<AcrossStudyView> read_study_across(Env& env, const RequestRecord& member)
{
  RV_TRY(members, load_study_members(env, member));
  return read_members(members);
}

std::vector<std::string> study_across_lines(const AcrossStudyView& v)
{
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.merged.tasks.size(); ++i) {
    const auto& t = v.merged.tasks[i];
    const auto& cmd = i < v.merged.study.tasks.size() ? v.merged.study.tasks[i].command : std::string();
    out.push_back(fmt::format("[{}] {:<8} on {:<10} attempt {} job {:<9} {:>8} exit {:<4} {}", t.id, to_string(t.state),
                              v.where[i] ? v.hosts[*v.where[i]] : "-", t.attempts, t.job_id.empty() ? "-" : t.job_id,
                              study_parts::task_time_text(t), study_parts::exit_text(t),
                              cmd.size() > 50 ? cmd.substr(0, 47) + "..." : cmd));
  }
  for (std::size_t c = 0; c < v.records.size(); ++c) {
    for (const auto& j : v.records[c].jobs) {
      out.push_back(fmt::format("  worker on {:<10} {:<8} {:<9} {:<13} {}", v.hosts[c], j.strategy_id,
                                j.job_id.empty() ? "-" : j.job_id, state_name(j).empty() ? "?" : state_name(j),
                                j.label));
    }
  }
  return out;
}

Result<int> show_task_log_across(Env& env, const RequestRecord& member, int task, bool follow, int tail)
{
  RV_TRY(members, load_study_members(env, member));
  RV_TRY(v, read_members(members));
  std::size_t c = 0;
  for (std::size_t i = 0; i < v.merged.tasks.size(); ++i) {
    if (v.merged.tasks[i].id == task && v.where[i]) {
      c = *v.where[i];
    }
  }
  // The task's latest attempt is on member c (or none has one yet: the coordinator says so, and
  // -f waits there).
  return show_task_log(*members[c].env, members[c].rec, task, follow, tail);
}

Result<std::vector<std::pair<std::string, std::vector<std::string>>>> stop_study_across(Env& env,
                                                                                        const RequestRecord& member)
{
  // The lock first, then the records: every worker a top-up added before it is read and cancelled.
  RV_TRY(changing, env.requests.hold_changes(study_coordinator(member)));
  RV_TRY(members, load_study_members(env, member));
  auto& coordinator = members.front().rec;
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  coordinator.state = RequestState::cancelled; // first: no offer or worker follows, whatever fails below
  save(env.requests, coordinator);
  // The offers still open are taken back: nothing of the study is left to take on any cluster.
  std::vector<std::vector<study::OfferStep>> steps(members.size());
  for (const auto& [task, o] : offers_of(coordinator).items()) {
    const auto c = o.value("cluster", std::size_t{0});
    if (c < steps.size()) {
      steps[c].push_back({study::OfferOp::revoke, std::stoi(task), o.value("attempt", 1)});
    }
  }
  for (std::size_t c = 0; c < members.size(); ++c) {
    auto& m = members[c];
    if (steps[c].empty()) {
      continue;
    }
    auto o = m.env->cluster.run(study::offer_ops_command(study::tasks_dir(m.rec.remote_root, m.rec.id), steps[c]));
    if (!o || !o->ok()) {
      spdlog::warn("study {}: the offers on {} were not taken back: {} (its workers are cancelled below)",
                   coordinator.id, m.env->cluster.where(), !o ? o.error().message : text::first_line(o->err));
    }
  }
  for (auto& m : members) {
    std::vector<std::string> ids;
    for (const auto& j : m.rec.jobs) {
      if (!j.job_id.empty() && !slurm::is_terminal(j.state)) {
        ids.push_back(j.job_id);
      }
    }
    RV_TRY_VOID(stop_member(*m.env, m.rec));
    m.rec.state = RequestState::cancelled;
    save(env.requests, m.rec);
    out.emplace_back(m.rec.id, std::move(ids));
  }
  return out;
}

std::optional<std::size_t> marks_wait_cluster(const AcrossStudyView& v)
{
  std::optional<std::size_t> only;
  for (std::size_t c = 0; c < v.per.size(); ++c) {
    if (v.per[c].workers_pending + v.per[c].workers_running > 0) {
      if (only) {
        return std::nullopt;
      }
      only = c;
    }
  }
  if (!only || !v.per[*only].marks.read || v.merged.counts.pending == 0) {
    return std::nullopt;
  }
  return only;
}

Result<int> settle_study_across(Env& env, const RequestRecord& member)
{
  RV_TRY(members, load_study_members(env, member));
  const auto id = members.front().rec.id;
  slurm::Backoff backoff({std::chrono::milliseconds(2000), std::chrono::milliseconds(10000), 1.5});
  for (int failures = 0;;) {
    auto tended = tend_across(env, members);
    if (!tended) {
      spdlog::warn("study {}: {}", id, tended.error().message);
      if (++failures >= k_max_failed_rounds) {
        spdlog::warn("study {}: stopped after {} failed rounds; rv _settle {} coordinates it again", id, failures, id);
        return 1;
      }
    } else if (tended->stopped) {
      spdlog::info("study {}: stopped (rv stop): no more offers or workers", id);
      return 0;
    } else if (!tended->broken.empty()) {
      spdlog::error("study {}: {}", id, tended->broken);
      for (auto& m : members) {
        m.rec.state = RequestState::failed;
        save(env.requests, m.rec);
      }
      return 1;
    } else if (tended->over) {
      spdlog::info("study {}: {}", id, study_counts_text(tended->view.merged));
      return tended->view.merged.counts.failed == 0 ? 0 : 1;
    } else {
      failures = 0;
    }
    if (interrupt_signal() != 0) {
      return 130;
    }
    const auto pause = backoff.next();
    if (tended) {
      if (const auto c = marks_wait_cluster(tended->view)) {
        // One round trip that waits on that cluster for a worker's start or end mark, at most the
        // poll's pause: a worker that starts gets its offer within a second or two.
        const auto& m = members[*c];
        const int seconds = static_cast<int>(std::max<std::int64_t>(1, pause.count() / 1000));
        const auto wait = study::worker_wait_command(study::tasks_dir(m.rec.remote_root, m.rec.id),
                                                     tended->view.per[*c].marks.count(), seconds);
        if (auto w = m.env->cluster.run(wait); w && w->ok()) {
          continue;
        }
      }
    }
    env.clock.sleep_for(pause);
  }
}

Result<int> run_study_across(Env& env, const StudyOrder& order, study::Study st, const std::string& line, bool follow)
{
  st.offers = true;
  RV_TRY(plans, make_plans(env, env.settings.hosts, order.request, order.plan_options));
  // Each cluster's workers and its own pool within its limits; the pool spread over them.
  struct Side {
    std::string host;
    Env* env = nullptr;
    study::PoolInput in;
    study_parts::PoolSide pool;
  };
  std::vector<Side> sides;
  std::size_t submitted = 0;
  for (const auto& c : plans.clusters) {
    Side s;
    s.host = c.host;
    s.env = c.env;
    s.in.unfinished = static_cast<int>(st.tasks.size());
    s.in.limits = c.run.cluster.limits;
    s.in.max_running = st.max_running;
    s.in.su_weight = study::su_weight(st.prefer);
    s.pool = study_parts::pool_side(c.run, st.task_time_s, s.in);
    submitted += s.pool.pool.submit.size();
    sides.push_back(std::move(s));
  }
  // As on one cluster: workers that hold a share of the tasks, on each cluster whose plan for them
  // (one more planning round, every cluster at once) the model expects to do at least as well.
  const int n = static_cast<int>(st.tasks.size());
  if (n > 1 && submitted > 0) {
    const int per_worker = study_parts::first_worker_share(n, submitted);
    auto longer = order.request;
    longer.time_s = study_parts::worker_walltime_s(st.task_time_s, per_worker);
    std::vector<std::string> hosts;
    for (const auto& s : sides) {
      hosts.push_back(s.host);
    }
    auto replanned = make_plans(env, hosts, longer, order.plan_options);
    for (auto& s : sides) {
      if (s.pool.strategies.empty()) {
        continue;
      }
      Result<PlanRun> mine = fail(ErrorCode::unreachable, replanned ? "not reached" : replanned.error().message);
      if (replanned) {
        for (auto& c : replanned->clusters) {
          if (c.host == s.host) {
            mine = std::move(c.run);
          }
        }
      }
      study_parts::keep_longer_if_better(s.pool, std::move(mine), s.in, st.task_time_s, per_worker, longer.time_s);
    }
  }
  // One model over every cluster's strategies: a worker goes where it shortens the study for the
  // least SU (su_weights weigh the clusters' units), each cluster within its own limits.
  std::vector<study::ClusterPool> pools;
  for (const auto& s : sides) {
    study::ClusterPool cp{s.pool.strategies, s.in, env.settings.su_weight(s.host)};
    cp.in.kinds = study::free_kinds(s.pool.planned.cluster, s.pool.strategies);
    pools.push_back(std::move(cp));
  }
  const auto spread = study::plan_pool_across(pools, st.task_time_s);
  if (order.dry_run) {
    if (env.json) {
      nlohmann::json clusters = nlohmann::json::array();
      for (std::size_t c = 0; c < sides.size(); ++c) {
        nlohmann::json workers = nlohmann::json::array();
        for (auto k : spread[c]) {
          workers.push_back(sides[c].pool.strategies[k].id);
        }
        clusters.push_back({{"host", sides[c].host},
                            {"workers", workers},
                            {"notes", sides[c].pool.pool.notes},
                            {"dropped", sides[c].pool.dropped}});
      }
      env.output.out(store::dump_for_display({{"study", study::to_json(st)}, {"clusters", clusters}}) + "\n");
      return 0;
    }
    print_plans(env.output, plans, false, false);
    std::string out = fmt::format(
        "\nstudy across {} cluster(s): {} task(s), a task's --time {}, {} attempt(s) each{}; the pool "
        "prefers {}\n",
        sides.size(), st.tasks.size(), format_human_duration(st.task_time_s), st.retries + 1,
        st.max_running > 0 ? fmt::format(", at most {} at once", st.max_running) : "", study::to_string(st.prefer));
    for (const auto& t : st.tasks) {
      out += fmt::format("  [{}] {}\n", t.id, t.command);
    }
    for (std::size_t c = 0; c < sides.size(); ++c) {
      out += fmt::format("{}: {} worker(s) to submit\n", sides[c].host, spread[c].size());
      for (auto k : spread[c]) {
        const auto& s = sides[c].pool.strategies[k];
        out += fmt::format("  {:<4} {}  wait {}  {:.1f} SU per worker\n", s.id, s.label, wait_in_words(s.est_wait_s),
                           s.est_su);
      }
      for (const auto& d : sides[c].pool.dropped) {
        out += "  not a worker: " + d + "\n";
      }
      for (const auto& note : sides[c].pool.pool.notes) {
        out += "  note: " + note + "\n";
      }
    }
    env.output.out(out);
    return 0;
  }
  std::vector<std::size_t> chosen; // the sides that get workers
  std::vector<std::string> hosts;
  for (std::size_t c = 0; c < sides.size(); ++c) {
    if (!spread[c].empty()) {
      chosen.push_back(c);
      hosts.push_back(sides[c].host);
    }
  }
  if (chosen.empty()) {
    return fail(ErrorCode::usage, "no cluster has a strategy that can run a study's task within its limits",
                "rv run --dry-run --array ... --host A --host B shows the strategies, the limits and why");
  }
  auto prepared = on_every_cluster(env, hosts, order.prepare);
  std::vector<Launched> owners;
  std::vector<RaceMember> members;
  nlohmann::json across = {{"members", nlohmann::json::array()}};
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    auto& side = sides[chosen[i]];
    auto& smart = prepared[i].result;
    if (!smart) {
      if (smart.error().code == ErrorCode::interrupted || smart.error().code == ErrorCode::usage) {
        return std::unexpected(smart.error());
      }
      spdlog::warn("cluster {} is left out: {}", side.host, smart.error().message);
      continue;
    }
    auto extras = smart->extras;
    extras.study = std::make_shared<const study::Study>(st);
    extras.followed = follow;
    int next = 1;
    auto planned = study_parts::workers_plan(side.pool.planned, side.pool.strategies, spread[chosen[i]], next);
    auto launched = submit_request(*side.env, planned, line, smart->workdir, "run", extras);
    if (!launched) {
      if (launched.error().code == ErrorCode::interrupted) {
        for (std::size_t k = 0; k < members.size(); ++k) {
          (void)stop_member(*members[k].env, owners[k].rec);
          owners[k].finish(RequestState::cancelled);
        }
        return std::unexpected(launched.error());
      }
      spdlog::warn("cluster {} is left out: {}", side.host, launched.error().message);
      continue;
    }
    launched->rec.study["limits"] = study_parts::limits_json(side.pool.planned.cluster.limits);
    study_parts::record_slots(launched->rec, side.pool);
    across["members"].push_back({{"id", launched->rec.id}, {"host", side.host}});
    members.emplace_back(launched->rec, side.env);
    owners.push_back(std::move(*launched));
  }
  if (owners.empty()) {
    return fail(ErrorCode::slurm_rejected, "no cluster took the study's workers (the reasons are above)");
  }
  for (std::size_t c = 0; c < owners.size(); ++c) {
    owners[c].rec.study["across"] = across;
    if (c == 0) {
      owners[c].rec.study["across"]["offers"] = nlohmann::json::object();
    }
    owners[c].save();
    members[c].rec = owners[c].rec;
  }
  const auto id = owners.front().rec.id;
  spdlog::info("study {} across {}: tasks are offered to the clusters whose workers run", id, text::join(hosts, ", "));
  if (follow) {
    return follow_across(env, owners, members, order.flags.no_prefix);
  }
  for (auto& o : owners) {
    o.release(); // the workers run on; the background rv offers them the tasks
  }
  auto bg = env.clusters ? env.clusters->settle_in_background(id)
                         : Result<void>(fail(ErrorCode::generic, "no background rv"));
  if (!bg) {
    spdlog::warn("could not start the background rv that offers study {}'s tasks: {}; rv _settle {} does it", id,
                 bg.error().message, id);
  }
  if (env.json) {
    env.output.out(store::dump_for_display(to_json(owners.front().rec)) + "\n");
  } else if (env.quiet) {
    env.output.out(id + "\n");
  } else {
    std::size_t workers = 0;
    for (const auto& s : spread) {
      workers += s.size();
    }
    env.output.out(fmt::format("study {}: {} task(s) on {} worker(s) across {}\n", id, st.tasks.size(), workers,
                               text::join(hosts, ", ")) +
                   text::next_steps({{"rv ps " + id, "the tasks and their clusters"},
                                     {fmt::format("rv logs {}/{}", id, st.tasks.front().id), "a task's output"},
                                     {"rv stop " + id, "stop every worker on every cluster"}}));
  }
  return 0;
}

} // namespace rv::app
