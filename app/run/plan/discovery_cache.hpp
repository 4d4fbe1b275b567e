#pragma once
// The per-host discovery cache of app/run/discovery (docs/discovery-cache.md): every discovery
// command's outcome as last read, with when and the static facts' fingerprint, in env.cache.

#include "app/env.hpp"
#include "core/process/runner.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

struct CachedDiscovery {
  std::int64_t fetched_at = 0; // when the static facts were read (epoch seconds)
  bool expired = false;        // older than the expiry: its cluster only shapes the speculative probes
  std::string fingerprint;
  std::map<std::string, proc::Outcome> by_argv;

  // The cached outcome of the command `argv`; none when the cache lacks it.
  const proc::Outcome* find(const std::vector<std::string>& argv) const;
};

// The cache of `key` when it is this format, for this target and user (`expired` when older than
// the configured expiry); otherwise nullopt and why (debug log).
std::optional<CachedDiscovery> load_discovery_cache(Env& env, const std::string& key, const std::string& target,
                                                    const std::string& user);

// Writes the outcomes of `cmds` as read at `fetched_at`, with the static facts' `fingerprint`.
void save_discovery_cache(Env& env, const std::string& key, const std::string& target, const std::string& user,
                          std::int64_t fetched_at, const std::string& fingerprint,
                          const std::vector<proc::Command>& cmds, const std::vector<proc::Outcome>& outcomes);

} // namespace rv::app
