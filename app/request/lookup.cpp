#include "app/request/lookup.hpp"

#include "app/request/prune_requests.hpp"
#include "app/request/reap.hpp"
#include "core/process/read_along.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace rv::app {

bool same_host(const RequestRecord& r, const std::string& here)
{
  return r.host.empty() || r.host == here;
}

std::string current_host(Env& env)
{
  (void)env.cluster.user();
  return env.cluster.where();
}

Result<void> require_same_host(const RequestRecord& r, const std::string& here)
{
  if (same_host(r, here)) {
    return {};
  }
  return fail(ErrorCode::usage,
              fmt::format("request {} was submitted on {}, but rv is connected to {}", r.id, r.host, here),
              "run rv with the host it was submitted on (--host, RV_HOST or the config): a job id on another "
              "cluster is someone else's job");
}

Result<std::vector<RequestRecord>> load_requests(const store::RecordStore& store)
{
  std::vector<std::string> skipped;
  RV_TRY(all, store.list(&skipped));
  for (const auto& s : skipped) {
    spdlog::warn("skipping request record {}", s);
  }
  std::vector<RequestRecord> requests;
  for (const auto& j : all) {
    if (auto r = request_from_json(j)) {
      requests.push_back(std::move(*r));
    }
  }
  return requests;
}

Result<std::vector<RequestRecord>> list_requests(Env& env, bool all, std::map<std::string, Activity>* activity)
{
  RV_TRY(requests, load_requests(env.requests));
  {
    // Finished requests of this host leave the cluster once request_keep has passed (N15).
    std::vector<RequestRecord*> here;
    for (auto& r : requests) {
      if (same_host(r, current_host(env))) {
        here.push_back(&r);
      }
    }
    prune_remote_state(env.cluster, env.clock, env.requests, here, env.settings.request_keep_s);
  }
  std::vector<RequestRecord> shown;
  for (auto& r : requests) {
    if (all || !request_finished(r)) {
      shown.push_back(std::move(r));
    }
  }
  if (!shown.empty()) {
    // Only this host's requests are refreshed (and reaped); the others are shown as last known.
    const auto here = current_host(env);
    std::vector<RequestRecord> mine;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      if (same_host(shown[i], here)) {
        mine.push_back(shown[i]);
        where.push_back(i);
      } else if (!request_finished(shown[i])) {
        if (!shown[i].destination.empty() && env.clusters) {
          continue; // refreshed on its own cluster below
        }
        spdlog::info("request {} is on {}: shown as last known (rv is connected to {})", shown[i].id, shown[i].host,
                     here);
      }
    }
    // Active requests on another cluster that rv can reach by name (raced across clusters, or
    // submitted with another --host): refreshed there, one round trip per cluster.
    std::map<std::string, std::vector<std::size_t>> elsewhere;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      if (!same_host(shown[i], here) && !request_finished(shown[i]) && !shown[i].destination.empty() && env.clusters) {
        elsewhere[shown[i].destination].push_back(i);
      }
    }
    for (const auto& [dest, indices] : elsewhere) {
      auto other = env.clusters->open(dest);
      std::vector<RequestRecord> theirs;
      for (auto i : indices) {
        theirs.push_back(shown[i]);
      }
      auto report = other ? refresh_and_reap((*other)->cluster, env.clock, env.requests, theirs)
                          : Result<ReapReport>(std::unexpected(other.error()));
      if (!report) {
        spdlog::info("requests on {} shown as last known: {}", dest, report.error().message);
        continue;
      }
      for (const auto& n : report->notes) {
        spdlog::info("{}", n);
      }
      for (std::size_t k = 0; k < indices.size(); ++k) {
        shown[indices[k]] = std::move(theirs[k]);
      }
    }
    // The watchdog's samples of the requests running as last recorded ride on the first command.
    const auto dirs = activity ? running_watchdog_dirs(mine) : std::vector<std::string>{};
    proc::ReadAlong along(env.cluster, samples_command(dirs));
    proc::Runner& runner = dirs.empty() ? env.cluster : along;
    auto report = refresh_and_reap(runner, env.clock, env.requests, mine);
    if (!report) {
      if (report.error().code == ErrorCode::interrupted) {
        return std::unexpected(report.error());
      }
      // The records are here: shown as last known, with why the cluster could not say more (a
      // second factor with no terminal, a dropped link; UX review 3, N10).
      spdlog::warn("requests on {} shown as last known: {}", here, report.error().message);
    } else {
      for (const auto& n : report->notes) {
        spdlog::info("{}", n);
      }
    }
    if (report && along.also()) {
      const auto samples = split_samples(along.also()->out);
      for (const auto& r : mine) {
        if (auto a = activity_of(r, samples, env.settings.watchdog_interval_s)) {
          (*activity)[r.id] = *a;
        }
      }
    }
    for (std::size_t k = 0; k < mine.size(); ++k) {
      shown[where[k]] = std::move(mine[k]);
    }
  }
  return shown;
}

Result<RequestRecord> find_request(const store::RecordStore& store, const std::string& key)
{
  if (key.empty()) {
    return fail(ErrorCode::usage, "an empty request key", "give a request id, a job id or a name (rv ps -a)");
  }
  RV_TRY(all, store.list());
  std::vector<RequestRecord> records;
  for (const auto& j : all) {
    if (auto r = request_from_json(j)) {
      records.push_back(std::move(*r));
    }
  }
  sort_newest_first(records);
  const auto first = [&](auto&& matches) -> const RequestRecord* {
    for (const auto& r : records) {
      if (matches(r)) {
        return &r;
      }
    }
    return nullptr;
  };
  const auto has_job = [&](const RequestRecord& r) {
    return std::any_of(r.jobs.begin(), r.jobs.end(), [&](const JobRecord& j) {
      return j.job_id == key ||
             std::find(j.earlier_segments.begin(), j.earlier_segments.end(), key) != j.earlier_segments.end();
    });
  };
  if (const auto* hit = first([&](const RequestRecord& r) { return r.id == key; })) {
    return *hit;
  }
  const auto cluster = [](const RequestRecord& r) { return r.host.empty() ? r.destination : r.host; };
  // A race id (docs/multi-cluster.md): the member chosen, else its members are the candidates.
  std::vector<const RequestRecord*> members;
  for (const auto& r : records) {
    if (r.race.is_object() && r.race.value("group", "") == key) {
      members.push_back(&r);
    }
  }
  if (!members.empty()) {
    const auto chosen = members.front()->race.value("chosen", "");
    for (const auto* m : members) {
      if (!chosen.empty() && m->id == chosen) {
        return *m;
      }
    }
    std::string list; // in the race's rank order
    for (const auto& listed : members.front()->race.value("members", nlohmann::json::array())) {
      const auto id = listed.value("id", "");
      auto m = std::find_if(members.begin(), members.end(), [&](const RequestRecord* r) { return r->id == id; });
      if (m != members.end()) {
        list += fmt::format("{}{} on {}", list.empty() ? "" : ", ", id,
                            (*m)->destination.empty() ? (*m)->host : (*m)->destination);
      }
    }
    const bool over =
        std::all_of(members.begin(), members.end(), [](const auto* m) { return is_final_state(m->state); });
    return fail(
        ErrorCode::usage,
        fmt::format("race {} {}: its members are {}", key, over ? "ended without a winner" : "has no winner yet", list),
        "name one member by its id (rv ps lists them); rv stop stops the whole race by either");
  }
  // Job ids repeat across clusters: one on several clusters is not guessed (security-review-3 S10).
  std::vector<const RequestRecord*> with_job;
  for (const auto& r : records) {
    if (has_job(r)) {
      with_job.push_back(&r);
    }
  }
  if (!with_job.empty()) {
    if (std::all_of(with_job.begin(), with_job.end(),
                    [&](const RequestRecord* r) { return cluster(*r) == cluster(*with_job.front()); })) {
      return *with_job.front();
    }
    std::string list;
    for (const auto* r : with_job) {
      list +=
          fmt::format("{}{} on {}", list.empty() ? "" : ", ", r->id, r->destination.empty() ? r->host : r->destination);
    }
    return fail(ErrorCode::usage, fmt::format("job {} is a job of requests on several clusters: {}", key, list),
                "name the request by its id");
  }
  if (const auto* hit = first([&](const RequestRecord& r) { return r.name == key; })) {
    return *hit;
  }
  std::vector<const RequestRecord*> prefixed;
  for (const auto& r : records) {
    if (r.id.starts_with(key)) {
      prefixed.push_back(&r);
    }
  }
  if (prefixed.size() == 1) {
    return *prefixed.front();
  }
  if (prefixed.empty()) {
    return fail(ErrorCode::usage, fmt::format("no request matches '{}'", key), "`rv ps -a` lists requests");
  }
  std::string ids;
  for (const auto* m : prefixed) {
    ids += (ids.empty() ? "" : ", ") + m->id;
  }
  return fail(ErrorCode::usage, fmt::format("'{}' is the start of several request ids: {}", key, ids),
              "give more of the id");
}

Result<std::vector<RequestRecord>> requests_for_key(Env& env, const std::string& key, Unnamed unnamed)
{
  const auto here = current_host(env);
  if (!key.empty()) {
    RV_TRY(r, find_request(env.requests, key));
    RV_TRY_VOID(require_same_host(r, here));
    return std::vector<RequestRecord>{std::move(r)};
  }
  RV_TRY(all, load_requests(env.requests));
  std::vector<RequestRecord> mine, elsewhere;
  for (auto& r : all) {
    if (unnamed != Unnamed::unfinished || !request_finished(r)) {
      (same_host(r, here) ? mine : elsewhere).push_back(std::move(r));
    }
  }
  if (mine.empty() && !elsewhere.empty()) { // what the user meant is on another host: say so
    sort_newest_first(elsewhere);
    RV_TRY_VOID(require_same_host(elsewhere.front(), here));
  }
  sort_newest_first(mine);
  if (unnamed == Unnamed::newest_submitted) {
    std::stable_partition(mine.begin(), mine.end(),
                          [](const RequestRecord& r) { return r.state == RequestState::submitted; });
  }
  return mine;
}

} // namespace rv::app
