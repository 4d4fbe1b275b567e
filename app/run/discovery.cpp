#include "app/run/discovery.hpp"

#include "app/run/assoc_cache.hpp"
#include "core/store/cache_store.hpp"
#include "slurm/discover.hpp"
#include "slurm/discover_cache.hpp"
#include "slurm/queue.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

namespace rv::app {
namespace {

// The cache file's format; another number (an older or newer rv) is a miss.
constexpr int k_cache_version = 1;

double seconds_since(Clock& clock, std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(clock.now() - t0).count();
}

std::string argv_key(const std::vector<std::string>& argv)
{
  return fmt::format("{}", fmt::join(argv, "\x1f"));
}

// What a probe job asks for, whatever its id: the answers of one job serve every candidate
// with the same key.
std::string job_key(const slurm::ProbeJob& j)
{
  return fmt::format("{}|{}", fmt::join(j.grid_s, ","), fmt::join(slurm::probe_args(j.request), "\x1f"));
}

struct CachedDiscovery {
  std::int64_t fetched_at = 0; // when the static facts were read (epoch seconds)
  bool expired = false;        // older than the expiry: its cluster only shapes the speculative probes
  std::string fingerprint;
  std::map<std::string, proc::Outcome> by_argv;
};

// The cache of `key` when it is this format, for this target and user (`expired` when older than
// the configured expiry); otherwise nullopt and why (debug log).
std::optional<CachedDiscovery> load_cache(Env& env, const std::string& key, const std::string& target,
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

void save_cache(Env& env, const std::string& key, const std::string& target, const std::string& user,
                std::int64_t fetched_at, const std::string& fingerprint, const std::vector<proc::Command>& cmds,
                const std::vector<proc::Outcome>& outcomes)
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

Result<model::Cluster> parse_cluster(const std::vector<proc::Outcome>& outcomes)
{
  auto cluster = slurm::parse_discovery(outcomes);
  if (cluster) {
    for (const auto& w : cluster->warnings) {
      spdlog::debug("discovery: {}", w);
    }
  }
  return cluster;
}

// Appends `more` to `all` (answers, done ids, notes).
void append(slurm::ProbeOutput& all, slurm::ProbeOutput more)
{
  all.answers.insert(all.answers.end(), more.answers.begin(), more.answers.end());
  all.done.insert(more.done.begin(), more.done.end());
  all.notes.insert(all.notes.end(), more.notes.begin(), more.notes.end());
}

// rv's directories as resolved in the discovery batch; none (submission then resolves them in a
// round trip of its own, and says what went wrong) when that failed.
std::optional<RemoteRoots> roots_of(const Settings& settings, const proc::Outcome& outcome, const std::string& where)
{
  auto roots = read_roots(settings, outcome, where);
  if (!roots) {
    spdlog::debug("discovery: {}", roots.error().message);
    return std::nullopt;
  }
  return *roots;
}

} // namespace

slurm::ProbeJob probe_job(const strategy::Candidate& c, const strategy::PlanOptions& options)
{
  return {
      c.id,
      strategy::coarse_grid(c, options),
      {c.partition, c.nodes, c.cpus_per_task, c.mem_mb_per_node, c.gres, c.constraint, c.account, c.qos, c.exclude}};
}

proc::Command probe_command(const std::vector<slurm::ProbeJob>& jobs, const strategy::PlanOptions& options,
                            int concurrency)
{
  proc::Command probe;
  probe.argv = {"sh", "-s"};
  probe.stdin_data = slurm::probe_script(jobs, {options.now_threshold_s, options.refine_resolution_s, 12, concurrency});
  probe.timeout = std::chrono::minutes(5);
  probe.concurrent = true;
  return probe;
}

Result<slurm::ProbeOutput> read_probes(const proc::Outcome& outcome, const std::string& where)
{
  if (!outcome.ok() && outcome.out.empty()) {
    return fail(ErrorCode::slurm_rejected,
                fmt::format("the backfill probes failed on {} (exit {}): {}", where, outcome.status(), outcome.err),
                "run with -v; check that sbatch works on the login node");
  }
  auto parsed = slurm::parse_probe_output(outcome.out);
  for (const auto& n : parsed.notes) {
    spdlog::debug("probes: {}", n);
  }
  return parsed;
}

strategy::Windows windows_of(const slurm::ProbeOutput& answers, const std::vector<slurm::ProbeJob>& jobs,
                             const std::vector<strategy::Candidate>& candidates, const strategy::PlanOptions& options)
{
  std::map<std::string, std::string> run_id; // job key -> the id its answers carry
  for (const auto& j : jobs) {
    run_id.emplace(job_key(j), j.id);
  }
  std::vector<strategy::CandidateProbes> probed;
  for (const auto& c : candidates) {
    strategy::CandidateProbes cp;
    cp.candidate_id = c.id;
    auto it = run_id.find(job_key(probe_job(c, options)));
    if (it != run_id.end()) {
      cp.complete = answers.done.contains(it->second);
      for (const auto& a : answers.answers) {
        if (a.id == it->second) {
          cp.probes.push_back({a.walltime_s, a.start_in_s, a.message, a.refused});
        }
      }
    }
    probed.push_back(std::move(cp));
  }
  return strategy::make_windows(probed, candidates, options);
}

Result<Discovered> discover_and_probe(Env& env, const strategy::Profile& profile, const model::JobRequest& request,
                                      const strategy::PlanOptions& options)
{
  auto& runner = env.cluster;
  Discovered d;
  auto t0 = env.clock.now();
  const std::string user = runner.user(); // connects first: the times below are after connecting
  d.times.connect_s = seconds_since(env.clock, t0);
  slurm::DiscoveryQuery query;
  query.user = user;
  const auto cmds = slurm::discovery_commands(query); // concurrent: all at once
  auto queue_cmds = slurm::queue_commands();          // dynamic: in whichever batch reads the fresh facts
  for (auto& q : queue_cmds) {
    q.concurrent = true;
  }
  const int concurrency = env.settings.probe_concurrency;
  const bool caching = env.cache != nullptr && env.settings.discovery_cache_s > 0;
  const std::string target = runner.where();
  const auto key = store::CacheStore::key_for("discovery", target + "\n" + user);
  d.cache = caching ? "cold" : "off";

  // The association facts (sacctmgr) have a cache of their own, with a longer lifetime: served
  // from it, they are in no batch below; else they are read with whichever batch runs.
  const auto assoc = caching ? serve_assoc(env, target, user, cmds) : AssocServed{};
  const bool assoc_apart = assoc.use != AssocUse::off;
  std::vector<proc::Outcome> outcomes(cmds.size());
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    if (assoc.served(i)) {
      outcomes[i] = *assoc.outcomes[i];
    }
  }
  std::int64_t fetched_at = env.clock.epoch_seconds();
  std::string fingerprint;
  slurm::ProbeOutput answers;
  std::vector<slurm::ProbeJob> run_jobs; // every job whose answers are in `answers`
  bool warm = false;

  if (auto cached = caching ? load_cache(env, key, target, user) : std::nullopt) {
    // The cluster as last seen: its candidates are probed in the same round trip as the fresh
    // dynamic facts (if the fresh cluster yields others, they are probed afterwards).
    bool complete = true;
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      if (assoc.served(i)) {
        continue; // from the association cache (above)
      }
      auto it = cached->by_argv.find(argv_key(cmds[i].argv));
      complete = complete && it != cached->by_argv.end();
      if (it != cached->by_argv.end()) {
        outcomes[i] = it->second;
      }
    }
    Result<strategy::Candidates> speculative = fail(ErrorCode::generic, "it lacks a discovery command");
    if (complete) {
      auto previous = slurm::parse_discovery(outcomes);
      speculative = previous ? strategy::enumerate_candidates(*previous, profile, request, options)
                             : Result<strategy::Candidates>(std::unexpected(previous.error()));
    }
    if (speculative) {
      warm = true;
      std::vector<proc::Command> batch;
      // Read now: the dynamic facts, association facts not served, and every static one when expired.
      std::vector<std::size_t> dynamic;
      for (std::size_t i = 0; i < cmds.size(); ++i) {
        if (!slurm::is_static_discovery(cmds[i]) || (assoc_apart && is_assoc_discovery(cmds[i]) && !assoc.served(i)) ||
            (cached->expired && !assoc.served(i))) {
          dynamic.push_back(i);
          batch.push_back(cmds[i]);
        }
      }
      batch.push_back(slurm::config_stamp_command());
      const auto roots_at = batch.size();
      batch.push_back(roots_command(env.settings));
      const auto queue_at = batch.size();
      batch.insert(batch.end(), queue_cmds.begin(), queue_cmds.end());
      for (const auto& c : speculative->list) {
        run_jobs.push_back(probe_job(c, options));
      }
      if (!run_jobs.empty()) {
        batch.push_back(probe_command(run_jobs, options, concurrency));
      }
      auto t1 = env.clock.now();
      RV_TRY(outs, runner.run_batch(batch));
      d.times.discovery_s = seconds_since(env.clock, t1);
      for (std::size_t k = 0; k < dynamic.size(); ++k) {
        outcomes[dynamic[k]] = outs[k];
      }
      const auto& stamp = outs[dynamic.size()];
      d.roots = roots_of(env.settings, outs[roots_at], target);
      d.queue = slurm::parse_queue(outs[queue_at], outs[queue_at + 1]);
      if (!run_jobs.empty()) {
        auto spec = read_probes(outs.back(), target);
        if (spec) {
          answers = std::move(*spec);
        } else {
          spdlog::debug("probes: {}", spec.error().message);
          run_jobs.clear(); // probed again below
        }
      }
      fingerprint = slurm::static_fingerprint(cmds, outcomes, stamp);
      std::string stale;
      if (cached->expired) { // every static fact was read again in this round trip: cold, in one
        RV_TRY(cluster, parse_cluster(outcomes));
        d.cluster = std::move(cluster);
      } else if (fingerprint != cached->fingerprint) {
        stale = "the partitions or slurm.conf changed";
      } else if (auto cluster = parse_cluster(outcomes); !cluster) {
        stale = cluster.error().message;
      } else if (auto fresh = slurm::sinfo_nodes(cmds, outcomes); !fresh) {
        stale = fresh.error().message;
      } else if (auto why = slurm::nodes_changed(cluster->nodes, *fresh); !why.empty()) {
        stale = why;
      } else {
        slurm::refresh_dynamic(*cluster, *fresh);
        d.cluster = std::move(*cluster);
        fetched_at = cached->fetched_at;
        d.cache = "warm";
      }
      if (!stale.empty()) {
        spdlog::debug("cache: the cached static facts of {} no longer hold ({}): reading them again", target, stale);
        d.cache = "stale: " + stale;
        std::vector<proc::Command> again;
        std::vector<std::size_t> index;
        for (std::size_t i = 0; i < cmds.size(); ++i) {
          if (slurm::is_static_discovery(cmds[i]) && !(assoc_apart && is_assoc_discovery(cmds[i]))) {
            index.push_back(i);
            again.push_back(cmds[i]);
          }
        }
        auto t2 = env.clock.now();
        RV_TRY(fresh_static, runner.run_batch(again));
        d.times.discovery_s += seconds_since(env.clock, t2);
        for (std::size_t k = 0; k < index.size(); ++k) {
          outcomes[index[k]] = fresh_static[k];
        }
        RV_TRY(cluster, parse_cluster(outcomes));
        d.cluster = std::move(cluster);
      }
    } else {
      spdlog::debug("cache: the discovery cache of {} cannot be used: {}", target, speculative.error().message);
    }
  }

  if (!warm) {
    std::vector<proc::Command> batch;
    std::vector<std::size_t> index; // batch[k] is cmds[index[k]]
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      if (!assoc.served(i)) {
        index.push_back(i);
        batch.push_back(cmds[i]);
      }
    }
    const auto stamp_at = batch.size();
    if (caching) {
      batch.push_back(slurm::config_stamp_command());
    }
    const auto roots_at = batch.size();
    batch.push_back(roots_command(env.settings));
    const auto queue_at = batch.size();
    batch.insert(batch.end(), queue_cmds.begin(), queue_cmds.end());
    auto t1 = env.clock.now();
    RV_TRY(outs, runner.run_batch(batch));
    d.times.discovery_s = seconds_since(env.clock, t1);
    if (outs.size() != batch.size()) {
      return fail(ErrorCode::generic, fmt::format("discovery expected {} outcomes, got {}", batch.size(), outs.size()));
    }
    for (std::size_t k = 0; k < index.size(); ++k) {
      outcomes[index[k]] = outs[k];
    }
    if (caching) {
      fingerprint = slurm::static_fingerprint(cmds, outcomes, outs[stamp_at]);
    }
    d.roots = roots_of(env.settings, outs[roots_at], target);
    d.queue = slurm::parse_queue(outs[queue_at], outs[queue_at + 1]);
    RV_TRY(cluster, parse_cluster(outcomes));
    d.cluster = std::move(cluster);
  }
  if (caching) {
    save_cache(env, key, target, user, fetched_at, fingerprint, cmds, outcomes);
  }
  if (assoc.use == AssocUse::read_now) {
    save_assoc(env, target, user, env.clock.epoch_seconds(), cmds, outcomes);
  }

  RV_TRY(candidates, strategy::enumerate_candidates(d.cluster, profile, request, options));
  std::set<std::string> have;
  for (const auto& j : run_jobs) {
    have.insert(job_key(j));
  }
  std::vector<slurm::ProbeJob> missing;
  for (const auto& c : candidates.list) {
    auto j = probe_job(c, options);
    if (!have.contains(job_key(j))) {
      j.id = (warm ? "x" : "") + j.id; // never the id of a speculative job
      missing.push_back(std::move(j));
    }
  }
  if (!missing.empty()) {
    if (warm) {
      spdlog::debug("probes: {} candidates were not probed with discovery: one more round trip", missing.size());
    }
    auto t1 = env.clock.now();
    auto probe = probe_command(missing, options, concurrency);
    probe.concurrent = false;
    RV_TRY(outcome, runner.run(probe));
    RV_TRY(more, read_probes(outcome, target));
    d.times.probes_s = seconds_since(env.clock, t1);
    append(answers, std::move(more));
    run_jobs.insert(run_jobs.end(), missing.begin(), missing.end());
  }
  d.probes = static_cast<int>(answers.answers.size());
  d.windows = windows_of(answers, run_jobs, candidates.list, options);
  for (const auto& n : d.queue.notes) {
    spdlog::debug("queue: {}", n);
  }
  spdlog::debug("queue: {} running and pending jobs read", d.queue.jobs.size());
  d.windows.queue = d.queue;
  return d;
}

} // namespace rv::app
