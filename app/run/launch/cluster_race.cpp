#include "app/run/launch/cluster_race.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "core/store/record_store.hpp"
#include "core/text.hpp"
#include "slurm/backoff.hpp"
#include "slurm/job_state.hpp"
#include "slurm/monitor.hpp"
#include "templates/render.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <limits>
#include <set>

namespace rv::app {
namespace {

std::string request_dir(const RequestRecord& rec)
{
  return rec.remote_root + "/requests/" + rec.id;
}

// Writes `file` (go or stop) in the member's request directory on its cluster. The directory is
// resolved there (rv_abs): a record still `submitting` holds the configured root (`~/.rv`), not
// yet the resolved one, and `"$1"` would make a directory literally named `~` (S6).
Result<void> mark(proc::Runner& runner, const RequestRecord& rec, const std::string& file)
{
  proc::Command c;
  c.argv = {"sh",
            "-c",
            std::string(proc::remote::abs_path_function()) +
                "d=$(rv_abs \"$1\") || exit 1; mkdir -p -- \"$d\" && : >\"$d/$2\"",
            "sh",
            request_dir(rec),
            file};
  c.timeout = std::chrono::seconds(30);
  RV_TRY(o, runner.run(c));
  if (!o.ok()) {
    return fail(ErrorCode::generic, fmt::format("cannot write {} for request {} on {}: {}", file, rec.id,
                                                runner.where(), text::first_line(o.err)));
  }
  return {};
}

std::vector<std::string> live_job_ids(const RequestRecord& rec)
{
  std::vector<std::string> ids;
  for (const auto& j : rec.jobs) {
    if (!j.job_id.empty() && !slurm::is_terminal(j.state)) {
      ids.push_back(j.job_id);
    }
  }
  return ids;
}

std::string host_of(const RaceMember& m)
{
  return m.rec.destination.empty() ? m.rec.host : m.rec.destination;
}

MemberPoll poll_member(RaceMember& m)
{
  MemberPoll p;
  std::vector<std::string> ids;
  std::map<std::string, std::string> names;
  for (const auto& j : m.rec.jobs) {
    if (!j.job_id.empty()) {
      ids.push_back(j.job_id);
      names[j.job_id] = m.rec.name;
    }
  }
  if (ids.empty()) {
    p.reached = true;
    return p;
  }
  auto views = slurm::poll_jobs(m.env->cluster, ids, m.env->clock.epoch_seconds(), nullptr, names);
  if (!views) {
    p.error = views.error().message;
    p.login_failed = LoginBackoff::is_login_failure(views.error());
    return p;
  }
  p.reached = true;
  p.views = std::move(*views);
  return p;
}

// Ends a member that lost; a failed scancel is left to the next settle step.
void end_loser(RaceMember& m, const RequestRecord& chosen)
{
  if (auto s = stop_member(*m.env, m.rec); !s) {
    spdlog::warn("{} (`rv ps` tries again)", s.error().message);
    return;
  }
  if (!is_final_state(m.rec.state)) {
    m.rec.state = RequestState::cancelled;
  }
  spdlog::debug("request {} on {} lost the race to {} on {}", m.rec.id, host_of(m), chosen.id,
                chosen.destination.empty() ? chosen.host : chosen.destination);
}

} // namespace

Result<void> stop_member(Env& member_env, RequestRecord& rec)
{
  auto& runner = member_env.cluster;
  if (auto s = mark(runner, rec, "stop"); !s) {
    spdlog::warn("{}", s.error().message); // the gate's own wait still ends a started job
  }
  if (rec.state == RequestState::submitting) {
    // Its sbatch may have made jobs whose ids never came back: found by their comment first, so
    // that they are cancelled with the rest (S6); a search that fails leaves the member as it is.
    RV_TRY(found, adopt_orphans(runner, rec));
    if (!found.empty()) {
      spdlog::info("request {}: found job(s) {} by their comment", rec.id, fmt::join(found, " "));
    }
  }
  const auto ids = live_job_ids(rec);
  if (ids.empty()) {
    return {};
  }
  if (auto c = slurm::cancel_jobs(runner, ids, rec.name); !c) {
    return fail(c.error().code,
                fmt::format("could not cancel jobs {} of request {} on {}: {}", fmt::join(ids, " "), rec.id,
                            runner.where(), c.error().message),
                fmt::format("rv stop {} cancels them", rec.id));
  }
  for (auto& j : rec.jobs) {
    if (std::find(ids.begin(), ids.end(), j.job_id) != ids.end()) {
      mark_cancelled(j, member_env.clock.epoch_seconds());
    }
  }
  return {};
}

std::optional<Route> route_request(const store::RecordStore& store, const std::string& key)
{
  std::optional<RequestRecord> rec;
  if (auto found = find_request(store, key)) { // an empty key matches nothing
    rec = std::move(*found);
  } else {
    return std::nullopt;
  }
  const std::string chosen = rec->race.is_object() ? rec->race.value("chosen", "") : "";
  if (!chosen.empty() && chosen != rec->id) {
    if (auto j = store.read(chosen)) {
      if (auto r = request_from_json(*j)) {
        rec = std::move(*r);
      }
    }
  }
  return Route{rec->destination, rec->id};
}

namespace {

// Every member with jobs to poll failed its last login, and one has failed LoginBackoff::k_max
// times in a row: the background settler stops.
bool logins_exhausted(const std::vector<RaceMember>& members)
{
  bool exhausted = false;
  for (const auto& m : members) {
    if (live_job_ids(m.rec).empty()) {
      continue;
    }
    if (m.logins.failures() == 0) {
      return false;
    }
    exhausted = exhausted || m.logins.exhausted();
  }
  return exhausted;
}

} // namespace

Settled settle_members(Env& env, std::vector<RaceMember>& members)
{
  const auto group = members.empty() ? std::string() : race_group(members.front().rec);
  slurm::Backoff backoff(slurm::Backoff::settling());
  std::set<std::string> named; // the clusters already said to be out of reach
  for (;;) {
    if (interrupt_signal() != 0) {
      return {SettleEnd::interrupted, 0};
    }
    auto step = settle_step(env, members);
    if (!step) {
      spdlog::warn("race {}: {}", group, step.error().message);
    } else {
      for (const auto& u : step->unreached) {
        if (named.insert(u.substr(0, u.find(':'))).second) {
          spdlog::warn("race {}: cannot reach {}; the race goes on with the other clusters", group, u);
        }
      }
      if (step->chosen) {
        return {SettleEnd::chosen, *step->chosen};
      }
      if (step->over) {
        return {SettleEnd::over, 0};
      }
    }
    if (logins_exhausted(members)) {
      return {SettleEnd::logins_failed, 0};
    }
    env.clock.sleep_for(backoff.next());
  }
}

Result<int> settle_race(Env& env, const std::string& request_id)
{
  RV_TRY(j, env.requests.read(request_id));
  RV_TRY(rec, request_from_json(j));
  RV_TRY(members, load_race_members(env, rec));
  const auto settled = settle_members(env, members);
  switch (settled.end) {
  case SettleEnd::chosen:
    return 0;
  case SettleEnd::over:
    spdlog::info("race {}: every job ended before any was chosen", race_group(rec));
    break;
  case SettleEnd::interrupted:
    spdlog::warn("race {}: stopped by a signal before a choice; `rv ps` settles the race", race_group(rec));
    break;
  case SettleEnd::logins_failed:
    spdlog::warn("race {}: stopped: every cluster's login failed, {} times in a row, with no terminal to answer "
                 "it; `rv ps` at a terminal settles the race",
                 race_group(rec), LoginBackoff::k_max);
    break;
  }
  return 1;
}

std::optional<std::size_t> choose_member(const std::vector<MemberPoll>& polls)
{
  std::optional<std::size_t> best;
  std::int64_t best_start = 0;
  for (std::size_t i = 0; i < polls.size(); ++i) {
    for (const auto& [id, v] : polls[i].views) {
      if (!slurm::is_started(v.state) || slurm::is_terminal(v.state)) {
        continue;
      }
      const std::int64_t start = v.start_epoch > 0 ? v.start_epoch : std::numeric_limits<std::int64_t>::max();
      if (!best || start < best_start) {
        best = i;
        best_start = start;
      }
    }
  }
  return best;
}

bool group_over(const std::vector<RaceMember>& members, const std::vector<MemberPoll>& polls)
{
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i >= polls.size() || !polls[i].reached) {
      return false;
    }
    for (const auto& j : members[i].rec.jobs) {
      if (j.job_id.empty()) {
        continue; // refused at submission
      }
      auto v = polls[i].views.find(j.job_id);
      const auto state = v != polls[i].views.end() ? v->second.state : j.state;
      if (!slurm::is_terminal(state)) {
        return false;
      }
    }
  }
  return true;
}

std::string race_group(const RequestRecord& rec)
{
  return rec.race.is_object() ? rec.race.value("group", "") : std::string();
}

std::vector<std::string> race_member_ids(const RequestRecord& rec)
{
  std::vector<std::string> ids;
  if (rec.race.is_object()) {
    for (const auto& m : rec.race.value("members", nlohmann::json::array())) {
      ids.push_back(m.value("id", ""));
    }
  }
  return ids;
}

Result<std::vector<RaceMember>> load_race_members(Env& env, const RequestRecord& rec)
{
  return load_members(env, race_member_ids(rec), "race " + race_group(rec));
}

Result<std::vector<RaceMember>> load_members(Env& env, const std::vector<std::string>& ids, const std::string& what)
{
  std::vector<RaceMember> members;
  for (const auto& id : ids) {
    auto j = env.requests.read(id);
    if (!j) {
      spdlog::warn("{}: the record of member {} cannot be read: {}", what, id, j.error().message);
      continue;
    }
    RV_TRY(r, request_from_json(*j));
    r.base = *j;
    Env* cluster_env = &env;
    if (env.clusters && !r.destination.empty()) {
      RV_TRY(opened, env.clusters->open(r.destination));
      cluster_env = opened;
    }
    members.push_back({std::move(r), cluster_env});
  }
  return members;
}

Result<SettleStep> settle_step(Env& env, std::vector<RaceMember>& members)
{
  SettleStep step;
  if (members.empty()) {
    step.over = true;
    return step;
  }
  const auto group = race_group(members.front().rec);
  RV_TRY(lock, store::FileLock::acquire(env.requests.dir() / (".race-" + group + ".lock")));
  for (auto& m : members) { // another rv may have settled it since
    if (auto j = env.requests.read(m.rec.id)) {
      if (auto r = request_from_json(*j)) {
        m.rec = std::move(*r);
        m.rec.base = *j;
      }
    }
  }
  // A cluster whose login failed with no terminal is not asked again before its next try.
  const auto now = env.clock.now();
  std::vector<std::optional<std::future<MemberPoll>>> polling;
  for (auto& m : members) {
    polling.emplace_back();
    if (m.logins.may_try(now)) {
      polling.back() = std::async(std::launch::async, [&m] { return poll_member(m); });
    }
  }
  std::vector<MemberPoll> polls;
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto& m = members[i];
    MemberPoll p;
    if (!polling[i]) {
      p.login_failed = true;
      p.error = fmt::format("the login failed {} times with no terminal to answer it; the next try in {} s",
                            m.logins.failures(),
                            std::chrono::duration_cast<std::chrono::seconds>(m.logins.next_try() - now).count());
    } else if (p = polling[i]->get(); p.login_failed) {
      const auto wait = m.logins.failed(env.clock.now());
      p.error += fmt::format(" (no terminal: the next try in {} s)",
                             std::chrono::duration_cast<std::chrono::seconds>(wait).count());
    } else if (p.reached) {
      m.logins.succeeded();
    }
    polls.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!polls[i].reached) {
      step.unreached.push_back(fmt::format("{}: {}", host_of(members[i]), polls[i].error));
    }
  }
  std::string chosen_id = members.front().rec.race.value("chosen", "");
  if (chosen_id.empty()) {
    if (auto c = choose_member(polls)) {
      chosen_id = members[*c].rec.id;
      for (auto& m : members) { // recorded everywhere before any `go`: no second choice, ever
        m.rec.race["chosen"] = chosen_id;
        save(env.requests, m.rec);
      }
      spdlog::info("race {}: {} on {} started first and is chosen", group, chosen_id, host_of(members[*c]));
    }
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].rec.id == chosen_id) {
      step.chosen = i;
    }
  }
  if (!step.chosen) {
    if (group_over(members, polls)) {
      step.over = true;
      for (auto& m : members) {
        if (!is_final_state(m.rec.state)) {
          m.rec.state = RequestState::failed;
          save(env.requests, m.rec);
        }
      }
    }
    return step;
  }
  auto& winner = members[*step.chosen];
  RV_TRY_VOID(mark(winner.env->cluster, winner.rec, "go"));
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i != *step.chosen && !is_final_state(members[i].rec.state)) {
      end_loser(members[i], winner.rec);
      save(env.requests, members[i].rec);
    }
  }
  (void)lock;
  return step;
}

void settle_open_races(Env& env)
{
  auto all = load_requests(env.requests);
  if (!all) {
    return;
  }
  std::vector<std::string> seen;
  for (const auto& r : *all) {
    const auto group = race_group(r);
    if (group.empty() || is_final_state(r.state) || std::find(seen.begin(), seen.end(), group) != seen.end()) {
      continue;
    }
    seen.push_back(group);
    if (!r.race.value("chosen", "").empty() && r.state != RequestState::submitting) {
      // Chosen: the losers may still need their stop and scancel (a settler died part-way).
      bool open_loser = false;
      for (const auto& id : race_member_ids(r)) {
        auto j = env.requests.read(id);
        auto m = j ? request_from_json(*j) : Result<RequestRecord>(std::unexpected(j.error()));
        open_loser = open_loser || (m && m->id != r.race.value("chosen", "") && !is_final_state(m->state));
      }
      if (!open_loser) {
        continue;
      }
    }
    auto members = load_race_members(env, r);
    if (!members) {
      spdlog::warn("race {}: {}", group, members.error().message);
      continue;
    }
    auto step = settle_step(env, *members);
    if (!step) {
      spdlog::warn("race {} not settled: {}", group, step.error().message);
      continue;
    }
    for (const auto& u : step->unreached) {
      spdlog::warn("race {}: cannot reach {}", group, u);
    }
    if (step->over && !step->chosen) {
      spdlog::info("race {}: every job ended without being chosen: the command never ran", group);
    }
  }
}

} // namespace rv::app
