#include "app/run/plan/discovery_cache.hpp"

#include "app/run/plan/assoc_cache.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace rv::app {
namespace {

// The cache file's format; another number (an older or newer rv) is a miss.
constexpr int k_cache_version = 1;

std::string argv_key(const std::vector<std::string>& argv)
{
  return fmt::format("{}", fmt::join(argv, "\x1f"));
}

} // namespace

const proc::Outcome* CachedDiscovery::find(const std::vector<std::string>& argv) const
{
  auto it = by_argv.find(argv_key(argv));
  return it == by_argv.end() ? nullptr : &it->second;
}

std::optional<CachedDiscovery> load_discovery_cache(Env& env, const std::string& key, const std::string& target,
                                                    const std::string& user)
{
  auto doc = env.cache->read(key);
  if (!doc) {
    spdlog::debug("cache: no discovery cache for {}", target);
    return std::nullopt;
  }
  try {
    if (doc->value("version", 0) != k_cache_version || doc->value("target", "") != target ||
        doc->value("user", "") != user) {
      spdlog::debug("cache: ignoring the discovery cache of {}: another format, target or user", target);
      return std::nullopt;
    }
    CachedDiscovery c;
    c.fetched_at = doc->at("fetched_at").get<std::int64_t>();
    c.fingerprint = doc->at("fingerprint").get<std::string>();
    const auto age = env.clock.epoch_seconds() - c.fetched_at;
    if (age < 0) {
      spdlog::debug("cache: the discovery cache of {} is from the future", target);
      return std::nullopt;
    }
    if (age > env.settings.discovery_cache_s) {
      spdlog::debug("cache: the discovery cache of {} is {} s old (expiry {} s): read again, its candidates probed "
                    "meanwhile",
                    target, age, env.settings.discovery_cache_s);
      c.expired = true;
    }
    for (const auto& o : doc->at("outcomes")) {
      auto [argv, out] = cached_outcome(o);
      c.by_argv[argv_key(argv)] = std::move(out);
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    spdlog::debug("cache: ignoring the discovery cache of {}: {}", target, e.what());
    return std::nullopt;
  }
}

void save_discovery_cache(Env& env, const std::string& key, const std::string& target, const std::string& user,
                          std::int64_t fetched_at, const std::string& fingerprint,
                          const std::vector<proc::Command>& cmds, const std::vector<proc::Outcome>& outcomes)
{
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < cmds.size() && i < outcomes.size(); ++i) {
    list.push_back(cached_outcome_json(cmds[i].argv, outcomes[i]));
  }
  nlohmann::json doc = {{"version", k_cache_version}, {"target", target},           {"user", user},
                        {"fetched_at", fetched_at},   {"fingerprint", fingerprint}, {"outcomes", list}};
  if (auto w = env.cache->write(key, doc); !w) {
    spdlog::debug("cache: cannot write the discovery cache: {}", w.error().message);
  }
}

} // namespace rv::app
