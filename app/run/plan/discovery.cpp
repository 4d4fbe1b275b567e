#include "app/run/plan/discovery.hpp"

#include "app/run/plan/assoc_cache.hpp"
#include "app/run/plan/discovery_cache.hpp"
#include "core/process/batch.hpp"
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

double seconds_since(Clock& clock, std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(clock.now() - t0).count();
}

// What a probe job asks for, whatever its id: the answers of one job serve every candidate
// with the same key.
std::string job_key(const slurm::ProbeJob& j)
{
  return fmt::format("{}|{}", fmt::join(j.grid_s, ","), fmt::join(slurm::probe_args(j.request), "\x1f"));
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
  // In argv, not on stdin: it holds only sbatch's options, which `ps` shows anyway, and a batch
  // with nothing on stdin saves a round trip (proc::batch_exec).
  probe.argv = {"sh", "-c",
                slurm::probe_script(jobs, {options.now_threshold_s, options.refine_resolution_s, 12, concurrency}),
                "rv-probe"};
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

namespace {

// One run of discover_and_probe: the discovery commands, their outcomes as they are filled in
// (from the association cache, the discovery cache, or this run's round trips), and the probe
// jobs run so far with their answers.
struct DiscoveryRun {
  DiscoveryRun(Env& e, const strategy::Profile& p, const model::JobRequest& r, const strategy::PlanOptions& o,
               const std::vector<proc::Command>& rs)
      : env(e), profile(p), request(r), options(o), riders(rs)
  {}

  Env& env;
  const strategy::Profile& profile;
  const model::JobRequest& request;
  const strategy::PlanOptions& options;
  const std::vector<proc::Command>& riders; // the caller's reads, in the fresh facts' batch
  std::string user;
  std::string target; // runner.where()
  std::string key;    // of the discovery cache
  bool caching = false;
  std::vector<proc::Command> cmds;     // every discovery command (concurrent: all at once)
  std::vector<proc::Outcome> outcomes; // of cmds
  AssocServed assoc;                   // the sacctmgr facts its own cache serves: in no batch below
  std::int64_t fetched_at = 0;         // when the static facts were read
  std::string fingerprint;
  slurm::ProbeOutput answers;
  std::vector<slurm::ProbeJob> run_jobs; // every job whose answers are in `answers`
  Discovered d;

  bool assoc_apart() const { return assoc.use != AssocUse::off; }
};

// The discovery commands a batch reads (those `wanted`), and where their answers go.
struct Reads {
  std::vector<std::size_t> index; // reads[k] is cmds[index[k]]
  proc::HandleRange answers;
};

template <class Wanted>
Reads add_reads(proc::Batch& batch, const DiscoveryRun& run, Wanted wanted)
{
  Reads r;
  std::vector<proc::Command> picked;
  for (std::size_t i = 0; i < run.cmds.size(); ++i) {
    if (wanted(i)) {
      r.index.push_back(i);
      picked.push_back(run.cmds[i]);
    }
  }
  r.answers = batch.add(std::move(picked));
  return r;
}

void take(DiscoveryRun& run, const Reads& r, const proc::Answers& answers)
{
  const auto outs = answers[r.answers];
  for (std::size_t k = 0; k < r.index.size(); ++k) {
    run.outcomes[r.index[k]] = outs[k];
  }
}

// What joins whichever batch reads the fresh facts: the config stamp (when caching), rv's
// directories, the queue, and the caller's riders.
struct Fresh {
  std::optional<proc::Handle> stamp;
  proc::Handle roots;
  proc::HandleRange queue;
  proc::HandleRange riders;
};

Fresh add_fresh(proc::Batch& batch, const DiscoveryRun& run, bool stamp)
{
  Fresh f;
  if (stamp) {
    f.stamp = batch.add(slurm::config_stamp_command());
  }
  f.roots = batch.add(roots_command(run.env.settings));
  auto queue = slurm::queue_commands();
  for (auto& q : queue) {
    q.concurrent = true;
  }
  f.queue = batch.add(std::move(queue));
  f.riders = batch.add(run.riders);
  return f;
}

void read_fresh(DiscoveryRun& run, const Fresh& f, const proc::Answers& answers)
{
  if (f.stamp) {
    run.fingerprint = slurm::static_fingerprint(run.cmds, run.outcomes, answers[*f.stamp]);
  }
  run.d.roots = roots_of(run.env.settings, answers[f.roots], run.target);
  run.d.queue = slurm::parse_queue(answers[f.queue]);
  const auto riders = answers[f.riders];
  run.d.riders.assign(riders.begin(), riders.end());
}

Result<proc::Answers> timed_batch(DiscoveryRun& run, const proc::Batch& batch)
{
  auto t = run.env.clock.now();
  auto answers = batch.run(run.env.cluster);
  run.d.times.discovery_s += seconds_since(run.env.clock, t);
  return answers;
}

// Fills run.outcomes from the cache; the candidates of the cluster it describes (an error when
// it lacks a command or no longer parses).
Result<strategy::Candidates> cached_candidates(DiscoveryRun& run, const CachedDiscovery& cached)
{
  bool complete = true;
  for (std::size_t i = 0; i < run.cmds.size(); ++i) {
    if (run.assoc.served(i)) {
      continue; // from the association cache
    }
    const auto* outcome = cached.find(run.cmds[i].argv);
    complete = complete && outcome != nullptr;
    if (outcome != nullptr) {
      run.outcomes[i] = *outcome;
    }
  }
  if (!complete) {
    return fail(ErrorCode::generic, "it lacks a discovery command");
  }
  RV_TRY(previous, slurm::parse_discovery(run.outcomes));
  return strategy::enumerate_candidates(previous, run.profile, run.request, run.options);
}

// Why the cached static facts no longer hold ("" when they do: the cluster is then theirs, with
// the fresh dynamic facts).
std::string stale_reason(DiscoveryRun& run, const CachedDiscovery& cached)
{
  if (run.fingerprint != cached.fingerprint) {
    return "the partitions or slurm.conf changed";
  }
  auto cluster = parse_cluster(run.outcomes);
  if (!cluster) {
    return cluster.error().message;
  }
  auto fresh = slurm::sinfo_nodes(run.cmds, run.outcomes);
  if (!fresh) {
    return fresh.error().message;
  }
  if (auto why = slurm::nodes_changed(cluster->nodes, *fresh); !why.empty()) {
    return why;
  }
  slurm::refresh_dynamic(*cluster, *fresh);
  run.d.cluster = std::move(*cluster);
  return {};
}

// The cached static facts no longer hold: reads them again (a second round trip).
Result<void> reread_static(DiscoveryRun& run, const std::string& stale)
{
  spdlog::debug("cache: the cached static facts of {} no longer hold ({}): reading them again", run.target, stale);
  run.d.cache = "stale: " + stale;
  proc::Batch batch("discovery");
  const auto reads = add_reads(batch, run, [&](std::size_t i) {
    return slurm::is_static_discovery(run.cmds[i]) && !(run.assoc_apart() && is_assoc_discovery(run.cmds[i]));
  });
  RV_TRY(answers, timed_batch(run, batch));
  take(run, reads, answers);
  RV_TRY(cluster, parse_cluster(run.outcomes));
  run.d.cluster = std::move(cluster);
  return {};
}

// Warm or expired cache: ONE round trip reads the dynamic facts (every fact when expired), the
// association facts not served, the stamp, the roots and the queue, and probes the candidates of
// the cluster as last seen. False when the cache cannot be used (then a cold round trip follows).
Result<bool> warm_round_trip(DiscoveryRun& run, const CachedDiscovery& cached)
{
  auto speculative = cached_candidates(run, cached);
  if (!speculative) {
    spdlog::debug("cache: the discovery cache of {} cannot be used: {}", run.target, speculative.error().message);
    return false;
  }
  proc::Batch batch("discovery");
  const auto reads = add_reads(batch, run, [&](std::size_t i) {
    const auto& c = run.cmds[i];
    return !run.assoc.served(i) &&
           (!slurm::is_static_discovery(c) || cached.expired || (run.assoc_apart() && is_assoc_discovery(c)));
  });
  const auto fresh = add_fresh(batch, run, true);
  for (const auto& c : speculative->list) {
    run.run_jobs.push_back(probe_job(c, run.options));
  }
  std::optional<proc::Handle> probes;
  if (!run.run_jobs.empty()) {
    probes = batch.add(probe_command(run.run_jobs, run.options, run.env.settings.probe_concurrency));
  }
  RV_TRY(answers, timed_batch(run, batch));
  take(run, reads, answers);
  read_fresh(run, fresh, answers);
  if (probes) {
    if (auto spec = read_probes(answers[*probes], run.target)) {
      run.answers = std::move(*spec);
    } else {
      spdlog::debug("probes: {}", spec.error().message);
      run.run_jobs.clear(); // probed again after discovery
    }
  }
  if (cached.expired) { // every static fact was read again in this round trip: cold, in one
    RV_TRY(cluster, parse_cluster(run.outcomes));
    run.d.cluster = std::move(cluster);
    return true;
  }
  if (auto stale = stale_reason(run, cached); !stale.empty()) {
    RV_TRY_VOID(reread_static(run, stale));
    return true;
  }
  run.fetched_at = cached.fetched_at;
  run.d.cache = "warm";
  return true;
}

// No usable cache: ONE round trip reads every fact not served, the stamp (when caching), the
// roots and the queue.
Result<void> cold_round_trip(DiscoveryRun& run)
{
  proc::Batch batch("discovery");
  const auto reads = add_reads(batch, run, [&](std::size_t i) { return !run.assoc.served(i); });
  const auto fresh = add_fresh(batch, run, run.caching);
  RV_TRY(answers, timed_batch(run, batch));
  take(run, reads, answers);
  read_fresh(run, fresh, answers);
  RV_TRY(cluster, parse_cluster(run.outcomes));
  run.d.cluster = std::move(cluster);
  return {};
}

// Probes the candidates of the fresh cluster that no job run so far answers for (one round trip
// when there are any); a speculative job's id is never reused (`x` prefix when warm).
Result<void> probe_missing(DiscoveryRun& run, const strategy::Candidates& candidates, bool warm)
{
  std::set<std::string> have;
  for (const auto& j : run.run_jobs) {
    have.insert(job_key(j));
  }
  std::vector<slurm::ProbeJob> missing;
  for (const auto& c : candidates.list) {
    auto j = probe_job(c, run.options);
    if (!have.contains(job_key(j))) {
      j.id = (warm ? "x" : "") + j.id;
      missing.push_back(std::move(j));
    }
  }
  if (missing.empty()) {
    return {};
  }
  if (warm) {
    spdlog::debug("probes: {} candidates were not probed with discovery: one more round trip", missing.size());
  }
  auto t = run.env.clock.now();
  auto probe = probe_command(missing, run.options, run.env.settings.probe_concurrency);
  probe.concurrent = false;
  RV_TRY(outcome, run.env.cluster.run(probe));
  RV_TRY(more, read_probes(outcome, run.target));
  run.d.times.probes_s = seconds_since(run.env.clock, t);
  append(run.answers, std::move(more));
  run.run_jobs.insert(run.run_jobs.end(), missing.begin(), missing.end());
  return {};
}

} // namespace

Result<Discovered> discover_and_probe(Env& env, const strategy::Profile& profile, const model::JobRequest& request,
                                      const strategy::PlanOptions& options, const std::vector<proc::Command>& riders)
{
  DiscoveryRun run{env, profile, request, options, riders};
  auto t0 = env.clock.now();
  run.user = env.cluster.user(); // connects first: the times below are after connecting
  run.d.times.connect_s = seconds_since(env.clock, t0);
  run.cmds = slurm::discovery_commands(slurm::plan_discovery_query(run.user));
  run.caching = env.cache != nullptr && env.settings.discovery_cache_s > 0;
  run.target = env.cluster.where();
  run.key = store::CacheStore::key_for("discovery", run.target + "\n" + run.user);
  run.d.cache = run.caching ? "cold" : "off";
  // The association facts (sacctmgr) have a cache of their own, with a longer lifetime: served
  // from it, they are in no batch below; else they are read with whichever batch runs.
  run.assoc = run.caching ? serve_assoc(env, run.target, run.user, run.cmds) : AssocServed{};
  run.outcomes.resize(run.cmds.size());
  for (std::size_t i = 0; i < run.cmds.size(); ++i) {
    if (run.assoc.served(i)) {
      run.outcomes[i] = *run.assoc.outcomes[i];
    }
  }
  run.fetched_at = env.clock.epoch_seconds();
  bool warm = false;
  if (auto cached = run.caching ? load_discovery_cache(env, run.key, run.target, run.user) : std::nullopt) {
    RV_TRY(used, warm_round_trip(run, *cached));
    warm = used;
  }
  if (!warm) {
    RV_TRY_VOID(cold_round_trip(run));
  }
  if (run.caching) {
    save_discovery_cache(env, run.key, run.target, run.user, run.fetched_at, run.fingerprint, run.cmds, run.outcomes);
  }
  if (run.assoc.use == AssocUse::read_now) {
    save_assoc(env, run.target, run.user, env.clock.epoch_seconds(), run.cmds, run.outcomes);
  }
  RV_TRY(candidates, strategy::enumerate_candidates(run.d.cluster, profile, request, options));
  RV_TRY_VOID(probe_missing(run, candidates, warm));
  run.d.probes = static_cast<int>(run.answers.answers.size());
  run.d.windows = windows_of(run.answers, run.run_jobs, candidates.list, options);
  for (const auto& n : run.d.queue.notes) {
    spdlog::debug("queue: {}", n);
  }
  spdlog::debug("queue: {} running and pending jobs read", run.d.queue.jobs.size());
  run.d.windows.queue = run.d.queue;
  run.d.candidates = std::move(candidates);
  return std::move(run.d);
}

} // namespace rv::app
