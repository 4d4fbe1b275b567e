#include "app/run/plan/assoc_cache.hpp"

#include "core/store/cache_store.hpp"
#include "slurm/discover.hpp"
#include "slurm/job_ends.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

namespace rv::app {
namespace {

// The file's format; another number (an older or newer rv) is a miss.
constexpr int k_assoc_version = 1;

std::string cache_key(const std::string& target, const std::string& user)
{
  return store::CacheStore::key_for("assoc", target + "\n" + user);
}

struct Cached {
  std::int64_t fetched_at = 0;
  bool failed = false;
  std::vector<std::pair<std::vector<std::string>, proc::Outcome>> outcomes;
};

std::optional<Cached> load(Env& env, const std::string& target, const std::string& user)
{
  auto doc = env.cache->read(cache_key(target, user));
  if (!doc) {
    return std::nullopt;
  }
  try {
    if (doc->value("version", 0) != k_assoc_version || doc->value("target", "") != target ||
        doc->value("user", "") != user) {
      spdlog::debug("cache: ignoring the association facts of {}: another format, target or user", target);
      return std::nullopt;
    }
    Cached c;
    c.fetched_at = doc->at("fetched_at").get<std::int64_t>();
    for (const auto& o : doc->at("outcomes")) {
      c.outcomes.push_back(cached_outcome(o));
      c.failed = c.failed || !c.outcomes.back().second.ok();
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    spdlog::debug("cache: ignoring the association facts of {}: {}", target, e.what());
    return std::nullopt;
  }
}

} // namespace

const char* to_string(AssocUse use)
{
  switch (use) {
  case AssocUse::off:
    return "off";
  case AssocUse::read_now:
    return "read now";
  case AssocUse::cached:
    return "cached";
  case AssocUse::cached_refresh:
    return "cached, refresh due";
  }
  return "off";
}

AssocUse assoc_use(std::optional<std::int64_t> fetched_at, bool failed, std::int64_t now, std::int64_t lifetime_s,
                   std::int64_t refresh_after_s)
{
  if (lifetime_s <= 0) {
    return AssocUse::off;
  }
  if (!fetched_at) {
    return AssocUse::read_now;
  }
  const auto age = now - *fetched_at;
  // A failed read (accounting unreachable) is kept no longer than the other static facts.
  const auto lifetime = failed ? std::min(lifetime_s, refresh_after_s) : lifetime_s;
  if (age < 0 || age > lifetime) {
    return AssocUse::read_now;
  }
  return age > refresh_after_s ? AssocUse::cached_refresh : AssocUse::cached;
}

nlohmann::json cached_outcome_json(const std::vector<std::string>& argv, const proc::Outcome& outcome)
{
  return {{"argv", argv}, {"exit", outcome.exit_code}, {"out", outcome.out}, {"err", outcome.err}};
}

std::pair<std::vector<std::string>, proc::Outcome> cached_outcome(const nlohmann::json& j)
{
  proc::Outcome out;
  out.exit_code = j.at("exit").get<int>();
  out.out = j.at("out").get<std::string>();
  out.err = j.at("err").get<std::string>();
  return {j.at("argv").get<std::vector<std::string>>(), std::move(out)};
}

bool is_assoc_discovery(const proc::Command& cmd)
{
  return (!cmd.argv.empty() && cmd.argv[0] == "sacctmgr") || slurm::is_job_ends_command(cmd);
}

AssocServed serve_assoc(Env& env, const std::string& target, const std::string& user,
                        const std::vector<proc::Command>& cmds)
{
  AssocServed s;
  s.outcomes.resize(cmds.size());
  if (env.cache == nullptr || env.settings.discovery_cache_s <= 0 || env.settings.assoc_cache_s <= 0) {
    return s; // off
  }
  const auto cached = load(env, target, user);
  s.use = assoc_use(cached ? std::optional(cached->fetched_at) : std::nullopt, cached && cached->failed,
                    env.clock.epoch_seconds(), env.settings.assoc_cache_s, env.settings.discovery_cache_s);
  if (s.use == AssocUse::read_now) {
    spdlog::debug("cache: the association facts of {} are read now ({})", target,
                  cached ? fmt::format("{} s old", env.clock.epoch_seconds() - cached->fetched_at) : "none cached");
    return s;
  }
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    if (!is_assoc_discovery(cmds[i])) {
      continue;
    }
    auto it = std::find_if(cached->outcomes.begin(), cached->outcomes.end(),
                           [&](const auto& o) { return o.first == cmds[i].argv; });
    if (it == cached->outcomes.end()) { // another rv asked other columns: read them all now
      spdlog::debug("cache: the cached association facts of {} lack {}", target, fmt::join(cmds[i].argv, " "));
      s.use = AssocUse::read_now;
      s.outcomes.assign(cmds.size(), std::nullopt);
      return s;
    }
    s.outcomes[i] = it->second;
  }
  if (s.use == AssocUse::cached_refresh) {
    env.after.refresh_assoc = true;
  }
  return s;
}

void save_assoc(Env& env, const std::string& target, const std::string& user, std::int64_t fetched_at,
                const std::vector<proc::Command>& cmds, const std::vector<proc::Outcome>& outcomes)
{
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < cmds.size() && i < outcomes.size(); ++i) {
    if (is_assoc_discovery(cmds[i])) {
      list.push_back(cached_outcome_json(cmds[i].argv, outcomes[i]));
    }
  }
  if (env.cache == nullptr || list.empty()) {
    return;
  }
  nlohmann::json doc = {
      {"version", k_assoc_version}, {"target", target}, {"user", user}, {"fetched_at", fetched_at}, {"outcomes", list}};
  if (auto w = env.cache->write(cache_key(target, user), doc); !w) {
    spdlog::debug("cache: cannot write the association facts: {}", w.error().message);
  }
}

Result<void> refresh_assoc(Env& env)
{
  const auto query = slurm::plan_discovery_query(env.cluster.user());
  std::vector<proc::Command> cmds;
  for (auto& c : slurm::discovery_commands(query)) {
    if (is_assoc_discovery(c)) {
      cmds.push_back(std::move(c));
    }
  }
  if (cmds.empty()) {
    return {}; // no user known: discovery reads no association facts either
  }
  const auto at = env.clock.epoch_seconds();
  RV_TRY(outs, env.cluster.run_batch(cmds));
  save_assoc(env, env.cluster.where(), query.user, at, cmds, outs);
  spdlog::debug("cache: the association facts of {} were read again", env.cluster.where());
  return {};
}

bool is_association_refusal(std::string_view sbatch_error)
{
  std::string lower(sbatch_error);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* needle : {"invalid account", "invalid qos", "accounting/qos policy", "association"}) {
    if (lower.find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

bool refresh_after_refusal(Env& env, const std::vector<std::string>& sbatch_errors)
{
  const bool refused = std::any_of(sbatch_errors.begin(), sbatch_errors.end(),
                                   [](const std::string& e) { return is_association_refusal(e); });
  if (!refused || env.cache == nullptr || env.settings.discovery_cache_s <= 0 || env.settings.assoc_cache_s <= 0) {
    return false;
  }
  spdlog::debug("cache: Slurm refused a job for an association reason: reading the association facts again");
  if (auto r = refresh_assoc(env); !r) {
    spdlog::debug("cache: cannot read the association facts: {}", r.error().message);
    return false;
  }
  return true;
}

} // namespace rv::app
