#include "app/request/lookup.hpp"

#include "app/request/prune_requests.hpp"
#include "app/request/reap.hpp"
#include "core/process/read_along.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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

} // namespace rv::app
