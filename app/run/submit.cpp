#include "app/run/submit.hpp"

#include "app/request/reap.hpp"
#include "app/run/assoc_cache.hpp"
#include "app/run/notify.hpp"
#include "app/run/uncertain_submit.hpp"
#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "slurm/submit.hpp"
#include "strategy/plan.hpp"
#include "templates/render.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
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
  return read_prepared(out, settings.remote_root, workdir, runner.where());
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
  ro.venv = extras.venv;
  ro.outputs = extras.outputs;
  ro.secrets_file = rec.secrets_file;
  ro.env = extras.env;
  ro.watchdog = extras.watchdog;
  return ro;
}

// Records the request, renders and submits every strategy in one round trip, records the job
// ids and prints them. Fails when nothing could be submitted.
Result<Launched> submit_request(Env& env, const PlanRun& planned, const std::string& command_line,
                                const std::string& workdir, const char* kind, const RunExtras& extras,
                                const std::string& shown_command)
{
  auto& runner = env.cluster;
  auto& store = env.requests;
  const auto& plan = planned.plan;
  if (plan.strategies.empty()) {
    return std::unexpected(strategy::no_viable_strategy(plan));
  }
  RV_TRY(stored, env.secrets.load());
  const std::string request_id = extras.request_id.empty() ? store::new_request_id() : extras.request_id;
  // rv's own webhook secret stays here; the jobs get the rest (and, with --notify, a derived key).
  std::vector<secrets::Var> secret_vars;
  std::string webhook_secret;
  for (auto& v : stored) {
    if (v.name == secrets::k_webhook_secret) {
      webhook_secret = std::move(v.value);
    } else {
      secret_vars.push_back(std::move(v));
    }
  }
  NotifyPlan notify;
  if (extras.notify) {
    RV_TRY(planned_notify, plan_notify(env.settings, webhook_secret, request_id));
    notify = std::move(planned_notify);
  }
  const std::string secrets_text =
      (secret_vars.empty() ? std::string() : secrets::env_script(secret_vars)) + notify.secrets_lines;

  // The record exists before anything reaches the cluster, the secrets file included: whatever
  // rv leaves there, a record names it (its '~' path resolves on the login node). Nothing
  // submitted or written is ever unknown.
  OwnedRequest owner(runner, store, {});
  RequestRecord& rec = owner.rec;
  rec.id = request_id;
  for (const auto& v : secret_vars) {
    rec.secrets.push_back(v.name);
  }
  const std::string configured_root = env.settings.remote_root;
  if (!secrets_text.empty()) {
    rec.secrets_file = configured_root + "/requests/" + rec.id + "/env";
  }
  rec.created_at = utc_iso(env.clock.epoch_seconds());
  rec.host = runner.where();
  rec.destination = env.destination;
  rec.race = extras.race;
  rec.kind = kind;
  rec.command = shown_command.empty() ? command_line : shown_command;
  rec.workdir = workdir;
  rec.remote_root = configured_root;
  rec.plan = strategy::to_json(plan);
  rec.options = request_options_json(planned.request);
  rec.sync = extras.sync;
  rec.refanout = extras.refanout;
  rec.utc_offset_s = planned.cluster.utc_offset_s; // reads Slurm's start estimates (rv stats)
  rec.name = planned.request.job_name.empty() ? "rv-" + rec.id : planned.request.job_name;
  for (const auto& s : plan.strategies) {
    JobRecord& j = rec.jobs.emplace_back();
    j.strategy_id = s.id;
    j.label = s.label;
    j.partition = s.partition;
    j.gpu_type = s.gpu_type;
    j.nodes = s.nodes;
    j.predicted_wait_s = s.est_wait_s; // the prediction history (docs/requests.md)
  }
  // Until the job ids are recorded, a concurrent `rv ps` must not take this live submission for
  // one a dead rv left (it adopted the jobs as orphans and cancelled them all; #15 campaign). Held
  // before the record exists, so no `rv ps` ever sees it `submitting` and unheld while rv lives.
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
  const auto submit_start = env.clock.now();
  const int trips_before = runner.round_trips();
  // One round trip when discovery resolved the roots: the record names the final paths before
  // anything is written there.
  const bool one_trip = planned.roots.has_value();
  RemotePaths paths;
  if (one_trip) {
    paths = remote_paths(*planned.roots);
  } else {
    auto prepared = prepare_remote(runner, env.settings, request_id, secrets_text, workdir);
    if (!prepared) {
      owner.finish(RequestState::failed); // removes the secrets: the write may have happened before the failure
      return std::unexpected(prepared.error());
    }
    paths = std::move(*prepared);
  }
  rec.remote_root = paths.root;
  rec.log_dir = paths.logs;
  if (!secrets_text.empty()) {
    rec.secrets_file = paths.requests + "/" + rec.id + "/env";
  }
  save(store, rec);

  auto ro = render_options(rec, paths, command_line, workdir, extras);
  ro.consume_secrets = std::string_view(kind) == "run"; // `rv up` shells read it after the job started
  ro.notify_mail_user = notify.mail_user;
  ro.notify_webhook = notify.webhook;
  ro.preflight = extras.preflight;
  ro.gate_wait_s = extras.gate_wait_s;
  ro.preflight_command = planned.profile.preflight_command;
  ro.preflight_required = planned.profile.preflight_required;
  std::vector<slurm::Submission> subs;
  std::vector<std::size_t> sub_index;
  for (std::size_t i = 0; i < plan.strategies.size(); ++i) {
    model::JobRequest req = planned.request;
    req.job_name = rec.name;
    ro.strategy_rank = static_cast<int>(i) + 1; // the plan is in rank order
    ro.strategy_count = static_cast<int>(plan.strategies.size());
    auto script = templates::render(plan.strategies[i], req, ro);
    if (!script) {
      rec.jobs[i].error = script.error().message;
      continue;
    }
    subs.push_back({plan.strategies[i].id, *script});
    sub_index.push_back(i);
  }
  Result<std::vector<slurm::SubmitResult>> submitted = fail(ErrorCode::generic, "not submitted");
  if (one_trip) {
    Preparation prep;
    prep.secrets = secrets_text;
    prep.secrets_id = rec.id;
    prep.workdir = workdir;
    prep.marker_id = rec.id;
    std::vector<proc::Command> batch = {prepare_command(paths.root, paths.cache, prep)};
    const auto marker = marker_path(paths.root, rec.id);
    for (const auto& c : slurm::submit_commands(subs)) {
      batch.push_back(guarded(c, marker));
    }
    auto outs = runner.run_batch(batch);
    if (!outs) {
      submitted = std::unexpected(outs.error());
    } else {
      auto results = slurm::parse_submit_outcomes(subs, {outs->begin() + 1, outs->end()});
      auto prepared = read_prepared(outs->front(), paths.root, workdir, runner.where());
      if (prepared) {
        submitted = std::move(results);
      } else if (std::none_of(results.begin(), results.end(), [](const auto& r) { return !r.job_id.empty(); })) {
        owner.finish(RequestState::failed); // no sbatch ran without the marker; removes the secrets
        return std::unexpected(prepared.error());
      } else {
        submitted = std::unexpected(prepared.error()); // one ran anyway: found and cancelled below
      }
    }
  } else {
    submitted = slurm::submit_all(runner, subs);
  }
  spdlog::debug("submit: {} jobs in {} round trips, {:.3f} s", subs.size(), runner.round_trips() - trips_before,
                std::chrono::duration<double>(env.clock.now() - submit_start).count());
  if (!submitted) {
    // Some sbatch of the batch may have run before the failure: find those jobs by their comment
    // and cancel them now; if that cannot run, the record stays searchable for `rv ps`.
    clear_interrupt(); // so that the cleanup's commands run
    const bool interrupted = submitted.error().code == ErrorCode::interrupted;
    auto settled = settle_failed_submission(runner, env.clock, store, rec,
                                            interrupted ? RequestState::cancelled : RequestState::failed);
    owner.close();
    return fail(submitted.error().code, fmt::format("{} (request {}: {})", submitted.error().message, rec.id, settled),
                submitted.error().hint);
  }
  std::vector<std::size_t> uncertain; // no job id, yet the job may exist (N3)
  for (std::size_t k = 0; k < submitted->size(); ++k) {
    auto& job = rec.jobs[sub_index[k]];
    job.job_id = (*submitted)[k].job_id;
    job.error = (*submitted)[k].error;
    job.state = job.job_id.empty() ? "REFUSED" : "PENDING";
    job.submitted_at = job.job_id.empty() ? 0 : env.clock.epoch_seconds();
    if ((*submitted)[k].uncertain) {
      uncertain.push_back(sub_index[k]);
    }
  }
  std::vector<std::string> errors;
  for (const auto& j : rec.jobs) {
    errors.push_back(j.error);
  }
  refresh_after_refusal(env, errors); // the cached association facts may be why rv chose that account or QOS
  if (!uncertain.empty()) {
    if (auto settled = settle_uncertain_submissions(runner, env.clock, store, rec, uncertain); !settled) {
      owner.close();
      return std::unexpected(settled.error());
    }
  }
  rec.state = rec.job_ids().empty() ? RequestState::failed : RequestState::submitted;
  save(store, rec);
  if (!rec.job_ids().empty()) { // Slurm's estimates, read after its next backfill pass (cli's after-work)
    env.after.requests.push_back(rec.id);
    env.after.bf_interval_s = planned.cluster.config.bf_interval_s;
  }

  if (!env.json && !env.quiet) {
    env.output.out(fmt::format("request {} ({}): {} {} on {}\n", rec.id, rec.name, rec.jobs.size(),
                               rec.jobs.size() == 1 ? "strategy" : "strategies", rec.host));
    for (const auto& j : rec.jobs) {
      env.output.out(fmt::format("  {:<4} {:<10} {}{}\n", j.strategy_id, j.job_id.empty() ? "-" : j.job_id, j.label,
                                 j.error.empty() ? "" : "  REFUSED: " + j.error));
    }
  }
  if (rec.job_ids().empty()) {
    owner.close();
    return fail(ErrorCode::slurm_rejected, fmt::format("Slurm refused every strategy of request {}", rec.id),
                "the reasons are listed above; try --dry-run -v");
  }
  return Launched(std::move(owner), std::move(paths));
}

} // namespace rv::app
