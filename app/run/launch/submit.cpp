#include "app/run/launch/submit.hpp"

#include "app/request/reap.hpp"
#include "app/run/launch/notify.hpp"
#include "app/run/launch/uncertain_submit.hpp"
#include "app/run/plan/assoc_cache.hpp"
#include "core/command/grammar.hpp"
#include "core/command/words.hpp"
#include "core/interrupt.hpp"
#include "core/process/batch.hpp"
#include "core/process/remote_files.hpp"
#include "core/utc_time.hpp"
#include "slurm/submit.hpp"
#include "strategy/plan.hpp"
#include "sync/snapshot.hpp"
#include "templates/render.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <functional>

namespace rv::app {
namespace {

std::string short_hash(const std::string& text)
{
  return fmt::format("{:08x}", static_cast<std::uint32_t>(std::hash<std::string>{}(text)));
}

} // namespace

Result<RemotePaths> prepare_remote(proc::Runner& runner, const Settings& settings, const std::string& request_id,
                                   const std::string& secrets, const std::string& workdir)
{
  Preparation prep;
  prep.secrets = secrets;
  prep.secrets_id = request_id;
  prep.workdir = workdir;
  RV_TRY(out, runner.run(prepare_command(settings.remote_root, settings.scratch_root, prep)));
  return read_prepared(out, settings.remote_root, prep, runner.where());
}

templates::RenderOptions render_options(const RequestRecord& rec, const RemotePaths& paths,
                                        const std::string& command_line, const std::string& workdir,
                                        const RunExtras& extras)
{
  templates::RenderOptions ro;
  ro.request_id = rec.id;
  ro.command = command_line;
  ro.workdir = workdir;
  ro.log_dir = paths.logs;
  ro.remote_root = paths.root;
  ro.checkpoint_root = paths.checkpoints;
  ro.project_key =
      !extras.project_key.empty() ? extras.project_key : "p" + short_hash(workdir.empty() ? "home" : workdir);
  ro.output_root = paths.outputs;
  ro.cache_root = paths.cache;
  ro.setup = extras.setup;
  ro.task_setup = extras.task_setup;
  ro.dependency = extras.dependency;
  ro.venv = extras.venv;
  ro.outputs = extras.outputs;
  ro.secrets_file = rec.secrets_file;
  ro.secret_names = rec.secrets;
  ro.env = extras.env;
  ro.watchdog = extras.watchdog;
  if (extras.study) {
    const auto& st = *extras.study;
    ro.study.task_time_s = st.task_time_s;
    ro.study.attempts = st.retries + 1;
    ro.study.retry_failed = st.retry_failed;
    ro.study.offers = st.offers;
    ro.study.offer_wait_s = st.offers ? study::k_offer_wait_s : 0;
    for (const auto& n : st.names) {
      ro.study.variables.push_back(study::sweep_variable(n));
    }
    for (const auto& t : st.tasks) {
      templates::StudyTask task{t.id, t.command, {}};
      for (const auto& [k, v] : t.params) {
        task.env.push_back({study::sweep_variable(k), v});
      }
      ro.study.tasks.push_back(std::move(task));
    }
  }
  return ro;
}

void add_job_record(RequestRecord& rec, const model::Strategy& s)
{
  JobRecord& j = rec.jobs.emplace_back();
  j.strategy_id = s.id;
  j.label = s.label;
  j.partition = s.partition;
  j.gpu_type = s.gpu_type;
  j.nodes = s.nodes;
  j.predicted_wait_s = s.est_wait_s; // the prediction history (docs/requests.md)
  j.predicted_by = std::string(model::to_string(s.wait_model));
}

Result<JobSecrets> job_secrets(Env& env, const std::string& request_id, bool notify,
                               const std::optional<std::vector<std::string>>& only)
{
  RV_TRY(stored, env.secrets.load());
  std::vector<secrets::Var> vars;
  std::string webhook_secret;
  for (auto& v : stored) {
    if (v.name == secrets::k_webhook_secret) {
      webhook_secret = std::move(v.value);
    } else if (!only || std::find(only->begin(), only->end(), v.name) != only->end()) {
      vars.push_back(std::move(v));
    }
  }
  if (only) {
    for (const auto& name : *only) {
      const bool have = std::any_of(vars.begin(), vars.end(), [&](const secrets::Var& v) { return v.name == name; });
      if (!have) {
        return fail(ErrorCode::usage, fmt::format("the secret {} is not set", name),
                    fmt::format("rv env set {} (the task file's [env] secrets names it)", name));
      }
    }
  }
  JobSecrets js;
  if (notify) {
    RV_TRY(planned_notify, plan_notify(env.settings, webhook_secret, request_id));
    js.notify = std::move(planned_notify);
  }
  for (const auto& v : vars) {
    js.names.push_back(v.name);
  }
  js.text = (vars.empty() ? std::string() : secrets::env_script(vars)) + js.notify.secrets_lines;
  return js;
}

namespace {

// What one submission works from, as submit_request was given it.
struct SubmitInput {
  const PlanRun& planned;
  const std::string& command_line;
  const std::string& workdir;
  const char* kind;
  const RunExtras& extras;
  const std::string& shown_command;
};

// The record of the request as it is before anything reaches the cluster: every strategy a job
// without an id yet, the secrets file (if any) under the configured root.
void fill_record(Env& env, const SubmitInput& in, const JobSecrets& js, RequestRecord& rec)
{
  const auto& plan = in.planned.plan;
  rec.secrets = js.names;
  const std::string configured_root = env.settings.remote_root;
  if (!js.text.empty()) {
    rec.secrets_file = configured_root + "/requests/" + rec.id + "/env";
  }
  rec.created_at = utc_iso(env.clock.epoch_seconds());
  rec.host = env.cluster.where();
  rec.destination = env.destination;
  rec.cluster = in.planned.cluster.config.cluster_name;
  rec.race = in.extras.race;
  rec.after = in.extras.after;
  rec.kind = in.kind;
  rec.command = in.shown_command.empty() ? in.command_line : in.shown_command;
  rec.workdir = in.workdir;
  rec.remote_root = configured_root;
  rec.plan = strategy::to_json(plan);
  rec.options = request_options_json(in.planned.request);
  rec.sync = in.extras.sync;
  rec.refanout = in.extras.refanout;
  rec.utc_offset_s = in.planned.cluster.utc_offset_s; // reads Slurm's start estimates (rv stats)
  rec.name = in.planned.request.job_name.empty() ? "rv-" + rec.id : in.planned.request.job_name;
  if (in.extras.study) {
    rec.study = study::to_json(*in.extras.study);
  }
  for (const auto& s : plan.strategies) {
    add_job_record(rec, s);
  }
}

// Stores the record, holding the submission lock first: until the job ids are recorded, a
// concurrent `rv ps` must not take this live submission for one a dead rv left (it adopted the
// jobs as orphans and cancelled them all; #15 campaign). Held before the record exists, so no
// `rv ps` ever sees it `submitting` and unheld while rv lives. The lock is the caller's to keep.
Result<store::FileLock> store_record(store::RecordStore& store, OwnedRequest& owner)
{
  auto& rec = owner.rec;
  auto submitting = store.hold_submission(rec.id);
  if (!submitting) {
    owner.release(); // nothing stored, nothing sent: nothing to clean up
    return std::unexpected(submitting.error());
  }
  if (auto created = store.create(rec.id, to_json(rec)); !created) {
    owner.release();
    return std::unexpected(created.error());
  }
  rec.base = to_json(rec); // later saves merge their changes into the stored record
  return std::move(*submitting);
}

// Where the request's files go: the roots discovery resolved (the record names the final paths
// before anything is written there), else a round trip of its own that also writes the secrets.
Result<RemotePaths> request_paths(Env& env, const SubmitInput& in, const JobSecrets& js, OwnedRequest& owner)
{
  auto& rec = owner.rec;
  RemotePaths paths;
  if (in.planned.roots) {
    paths = remote_paths(*in.planned.roots);
  } else {
    auto prepared = prepare_remote(env.cluster, env.settings, rec.id, js.text, in.workdir);
    if (!prepared) {
      owner.discard(); // removes the secrets (the write may have happened before the failure), then the record
      return std::unexpected(prepared.error());
    }
    paths = std::move(*prepared);
  }
  rec.remote_root = paths.root;
  rec.log_dir = paths.logs;
  if (!js.text.empty()) {
    rec.secrets_file = paths.requests + "/" + rec.id + "/env";
  }
  save(env.requests, rec);
  return paths;
}

// The job scripts of every strategy that renders (a strategy that does not gets its error).
struct Rendered {
  std::vector<slurm::Submission> subs;
  std::vector<std::size_t> strategy; // subs[k] is the plan's strategy[k]
};

Rendered render_scripts(const SubmitInput& in, const JobSecrets& js, const RemotePaths& paths, RequestRecord& rec)
{
  const auto& strategies = in.planned.plan.strategies;
  auto ro = render_options(rec, paths, in.command_line, in.workdir, in.extras);
  // `rv up` shells read it after the job started; a study's later workers too.
  ro.consume_secrets = std::string_view(in.kind) == "run" && !in.extras.study;
  ro.notify_mail_user = js.notify.mail_user;
  ro.notify_webhook = js.notify.webhook;
  ro.preflight = in.extras.preflight;
  ro.gate_wait_s = in.extras.gate_wait_s;
  ro.preflight_command = in.planned.profile.preflight_command;
  ro.preflight_required = in.planned.profile.preflight_required;
  ro.container = in.planned.container;
  if (ro.container && std::string_view(in.kind) == "up") {
    ro.container->prepare_only = true; // the holder sleeps on the node; the shell or CMD joins in the container
  }
  Rendered r;
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    model::JobRequest req = in.planned.request;
    req.job_name = rec.name;
    ro.strategy_rank = static_cast<int>(i) + 1; // the plan is in rank order
    ro.strategy_count = static_cast<int>(strategies.size());
    auto script = templates::render(strategies[i], req, ro);
    if (!script) {
      rec.jobs[i].error = script.error().message;
      continue;
    }
    r.subs.push_back({strategies[i].id, *script});
    r.strategy.push_back(i);
    if (in.extras.study) { // a study's top-up submits these again (app/run/study_run.hpp)
      study::add_worker_script(rec.study, strategies[i], *script);
    }
  }
  return r;
}

// sbatch's answers, or why they are missing: `settle` when some sbatch may have run (its job is
// then found by its comment and cancelled), false when none can have.
struct Sent {
  Result<std::vector<slurm::SubmitResult>> results;
  bool settle = true;
};

// rv's directories, the secrets and every sbatch in ONE round trip, each sbatch guarded by the
// marker the preparation writes last: no sbatch runs when the preparation failed.
Sent prepare_and_submit(proc::Runner& runner, const SubmitInput& in, const JobSecrets& js, const RemotePaths& paths,
                        const RequestRecord& rec, const std::vector<slurm::Submission>& subs)
{
  Preparation prep;
  prep.secrets = js.text;
  prep.secrets_id = rec.id;
  prep.workdir = in.workdir;
  prep.marker_id = rec.id;
  // In a container the program is the image's, which the login node cannot see.
  prep.program = in.planned.container ? std::string() : program_to_check(in.command_line, in.extras);
  prep.venv = in.extras.venv;
  proc::Batch batch("submission");
  // The job's snapshot first (issue #38 item 7): the preparation, whose marker lets an sbatch run,
  // runs only once the snapshot is there, so a failed snapshot stops the batch before any sbatch.
  std::optional<proc::Handle> snapshot;
  auto preparation = prepare_command(paths.root, paths.cache, prep);
  if (const auto& s = in.extras.snapshot) {
    snapshot = batch.add(sync::snapshot_command(s->workspace, s->snapshots, s->name));
    preparation = guarded(preparation, sync::snapshot_path(s->snapshots, s->name));
  }
  const auto prepare = batch.add(std::move(preparation));
  std::vector<proc::Command> sbatches;
  for (const auto& c : slurm::submit_commands(subs)) {
    sbatches.push_back(guarded(c, marker_path(paths.root, rec.id)));
  }
  const auto submits = batch.add(std::move(sbatches));
  auto answers = batch.run(runner);
  if (!answers) {
    return {std::unexpected(answers.error())};
  }
  const auto outs = (*answers)[submits];
  auto results = slurm::parse_submit_outcomes(subs, std::vector<proc::Outcome>(outs.begin(), outs.end()));
  const bool any = std::any_of(results.begin(), results.end(), [](const auto& r) { return !r.job_id.empty(); });
  if (snapshot) {
    const auto& s = *in.extras.snapshot;
    if (auto made = sync::snapshot_made((*answers)[*snapshot], runner.where(), s.workspace, s.snapshots, s.name);
        !made) {
      return {std::unexpected(made.error()), any}; // no preparation, no marker: no sbatch ran
    }
  }
  auto prepared = read_prepared((*answers)[prepare], paths.root, prep, runner.where());
  if (prepared) {
    return {std::move(results)};
  }
  return {std::unexpected(prepared.error()), any}; // one ran anyway: found and cancelled by the caller
}

// After a failed submission: the jobs some sbatch may have made are found by their comment and
// cancelled now; if that cannot run, the record stays searchable for `rv ps`.
Error settle_failure(Env& env, OwnedRequest& owner, const Error& error)
{
  clear_interrupt(); // so that the cleanup's commands run
  const bool interrupted = error.code == ErrorCode::interrupted;
  auto settled = settle_failed_submission(env.cluster, env.clock, env.requests, owner.rec,
                                          interrupted ? RequestState::cancelled : RequestState::failed);
  owner.close();
  return {error.code, fmt::format("{} (request {}: {})", error.message, owner.rec.id, settled), error.hint};
}

// Records each job id (or refusal), settles the uncertain answers (N3: no job id, yet the job may
// exist), and the request's state; queues the after-work that reads Slurm's estimates.
Result<void> record_jobs(Env& env, const PlanRun& planned, OwnedRequest& owner, const Rendered& rendered,
                         const std::vector<slurm::SubmitResult>& results)
{
  auto& rec = owner.rec;
  std::vector<std::size_t> uncertain;
  for (std::size_t k = 0; k < results.size(); ++k) {
    auto& job = rec.jobs[rendered.strategy[k]];
    job.job_id = results[k].job_id;
    job.error = results[k].error;
    job.state = job.job_id.empty() ? slurm::JobState::unknown : slurm::JobState::pending;
    job.submitted_at = job.job_id.empty() ? 0 : env.clock.epoch_seconds();
    if (results[k].uncertain) {
      uncertain.push_back(rendered.strategy[k]);
    }
  }
  std::vector<std::string> errors;
  for (const auto& j : rec.jobs) {
    errors.push_back(j.error);
  }
  refresh_after_refusal(env, errors); // the cached association facts may be why rv chose that account or QOS
  if (!uncertain.empty()) {
    if (auto settled = settle_uncertain_submissions(env.cluster, env.clock, env.requests, rec, uncertain); !settled) {
      owner.close();
      return std::unexpected(settled.error());
    }
  }
  rec.state = rec.job_ids().empty() ? RequestState::failed : RequestState::submitted;
  save(env.requests, rec);
  if (!rec.job_ids().empty()) { // Slurm's estimates, read after its next backfill pass (cli's after-work)
    env.after.requests.push_back(rec.id);
    env.after.bf_interval_s = planned.cluster.config.bf_interval_s;
  }
  return {};
}

void print_submitted(Env& env, const RequestRecord& rec, bool followed)
{
  if (env.json || env.quiet) {
    return;
  }
  std::string table = fmt::format("request {} ({}): {} {} on {}\n", rec.id, rec.name, rec.jobs.size(),
                                  rec.jobs.size() == 1 ? "strategy" : "strategies", rec.host);
  for (const auto& j : rec.jobs) {
    table += fmt::format("  {:<4} {:<10} {}{}\n", j.strategy_id, j.job_id.empty() ? "-" : j.job_id, j.label,
                         j.error.empty() ? "" : "  REFUSED: " + j.error);
  }
  if (followed) {
    env.output.err(table); // the job's output owns stdout
  } else {
    env.output.out(table);
  }
}

} // namespace

std::string program_to_check(const std::string& line, const RunExtras& extras)
{
  if (!extras.setup.empty() || !extras.task_setup.empty()) {
    return {};
  }
  const auto tokens = command::tokenize(line);
  if (std::any_of(tokens.begin(), tokens.end(),
                  [](const command::Token& t) { return t.kind == command::TokenKind::control && t.text == "("; })) {
    return {}; // a function the line defines (`f() { ...; }; f`) or a subshell: sh would know better
  }
  const auto commands = command::simple_commands(line);
  if (commands.empty()) {
    return {};
  }
  const auto words = commands.front().argv();
  const auto inv = command::invocation(words);
  if (inv.program == command::Invocation::npos) {
    return {};
  }
  const auto& program = words[inv.program];
  const bool plain = !program.empty() && std::all_of(program.begin(), program.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+';
  });
  return plain ? program : std::string();
}

// Records the request, renders and submits every strategy in one round trip, records the job
// ids and prints them. Fails when nothing could be submitted.
Result<Launched> submit_request(Env& env, const PlanRun& planned, const std::string& command_line,
                                const std::string& workdir, const char* kind, const RunExtras& extras,
                                const std::string& shown_command)
{
  if (planned.plan.strategies.empty()) {
    return std::unexpected(strategy::no_viable_strategy(planned.plan));
  }
  const SubmitInput in{planned, command_line, workdir, kind, extras, shown_command};
  const std::string request_id = extras.request_id.empty() ? store::new_request_id() : extras.request_id;
  RV_TRY(js, job_secrets(env, request_id, extras.notify, extras.secrets));
  // The record exists before anything reaches the cluster, the secrets file included: whatever
  // rv leaves there, a record names it (its '~' path resolves on the login node). Nothing
  // submitted or written is ever unknown.
  OwnedRequest owner(env.cluster, env.requests, {});
  owner.rec.id = request_id;
  fill_record(env, in, js, owner.rec);
  RV_TRY(submitting, store_record(env.requests, owner)); // held until the job ids are recorded
  const auto submit_start = env.clock.now();
  const int trips_before = env.cluster.round_trips();
  if (const auto& s = extras.snapshot; s && !planned.roots) { // no one-batch submission: made alone, first
    if (auto made = sync::make_snapshot(env.cluster, s->workspace, s->snapshots, s->name); !made) {
      owner.discard();
      return std::unexpected(made.error());
    }
  }
  RV_TRY(paths, request_paths(env, in, js, owner));
  const auto rendered = render_scripts(in, js, paths, owner.rec);
  auto sent = planned.roots ? prepare_and_submit(env.cluster, in, js, paths, owner.rec, rendered.subs)
                            : Sent{slurm::submit_all(env.cluster, rendered.subs)};
  spdlog::debug("submit: {} jobs in {} round trips, {:.3f} s", rendered.subs.size(),
                env.cluster.round_trips() - trips_before,
                std::chrono::duration<double>(env.clock.now() - submit_start).count());
  if (!sent.results && !sent.settle) {
    owner.discard(); // no sbatch ran without the marker: the secrets go, then the record
    return std::unexpected(sent.results.error());
  }
  if (!sent.results) {
    return std::unexpected(settle_failure(env, owner, sent.results.error()));
  }
  RV_TRY_VOID(record_jobs(env, planned, owner, rendered, *sent.results));
  print_submitted(env, owner.rec, extras.followed);
  if (owner.rec.job_ids().empty()) {
    owner.close();
    return fail(ErrorCode::slurm_rejected, fmt::format("Slurm refused every strategy of request {}", owner.rec.id),
                "the reasons are listed above; try --dry-run -v");
  }
  return Launched(std::move(owner), std::move(paths));
}

} // namespace rv::app
