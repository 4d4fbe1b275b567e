#pragma once
// Association and QOS facts (the sacctmgr commands of discovery: the user's associations, the QOS
// limits, the default account) in rv's per-host cache with a lifetime of their own, longer than
// the other static facts (docs/discovery-cache.md, "Association facts"): a plan takes them from
// the cache, so no sacctmgr (0.35 s against slurmdbd) is on a cold plan's critical path. They are
// read again in the background after a command that found them older than the discovery cache's
// expiry (cli's after-work), and at once when Slurm refuses a submission for an association reason.

#include "app/env.hpp"
#include "core/process/runner.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::app {

// What a plan does with the association facts.
enum class AssocUse {
  off,            // assoc_cache 0: they are static facts of the discovery cache, as the others
  read_now,       // none cached, expired or incomplete: sacctmgr runs in the discovery round trip
  cached,         // fresh: taken from the cache
  cached_refresh, // older than the refresh age: taken from the cache, read again in the background
};

const char* to_string(AssocUse use);

// The rule, pure. `fetched_at`: when the cached facts were read (nullopt = none); `failed`: one of
// them was a failed sacctmgr (accounting unreachable), kept only `refresh_after_s`; `lifetime_s`:
// the assoc_cache setting (0 = off); `refresh_after_s`: the discovery cache's expiry.
AssocUse assoc_use(std::optional<std::int64_t> fetched_at, bool failed, std::int64_t now, std::int64_t lifetime_s,
                   std::int64_t refresh_after_s);

// Whether `cmd` (one of discovery_commands) reads association or QOS facts (sacctmgr), or how
// early jobs end (slurm/job_ends.hpp: accounting as well, as slow to read and to change).
bool is_assoc_discovery(const proc::Command& cmd);

// The association facts for one plan: the outcome of each of `cmds` the cache serves (nullopt for
// the others and for every one when `use` is not cached or cached_refresh).
struct AssocServed {
  AssocUse use = AssocUse::off;
  std::vector<std::optional<proc::Outcome>> outcomes;
  bool served(std::size_t i) const { return i < outcomes.size() && outcomes[i].has_value(); }
};

// One command's outcome as rv's cache files keep it ({argv, exit, out, err}; discovery's too), and
// back (a json exception when malformed: the file is then a miss).
nlohmann::json cached_outcome_json(const std::vector<std::string>& argv, const proc::Outcome& outcome);
std::pair<std::vector<std::string>, proc::Outcome> cached_outcome(const nlohmann::json& j);

// Reads the cache of `target` and `user` (env.cache; none = off) and applies the rule to `cmds`.
AssocServed serve_assoc(Env& env, const std::string& target, const std::string& user,
                        const std::vector<proc::Command>& cmds);

// Stores the sacctmgr outcomes among `cmds` as read at `fetched_at` (nothing when there are none).
void save_assoc(Env& env, const std::string& target, const std::string& user, std::int64_t fetched_at,
                const std::vector<proc::Command>& cmds, const std::vector<proc::Outcome>& outcomes);

// Reads the association facts now (one round trip on env.cluster) and rewrites the cache.
Result<void> refresh_assoc(Env& env);

// Whether sbatch refused for an association reason (account, QOS or accounting policy): the
// cached facts may be why rv chose what it chose.
bool is_association_refusal(std::string_view sbatch_error);

// After a submission: when one of `sbatch_errors` is an association refusal and the association
// facts are cached apart (assoc_cache), reads them again now (refresh_assoc; a failure is only
// logged). Whether it did.
bool refresh_after_refusal(Env& env, const std::vector<std::string>& sbatch_errors);

} // namespace rv::app
