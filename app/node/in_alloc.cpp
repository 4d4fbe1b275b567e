#include "app/node/in_alloc.hpp"

#include "app/node/job_target.hpp"
#include "app/request/lookup.hpp"
#include "app/request/requests.hpp"
#include "app/run/launch/launch.hpp"
#include "app/run/launch/submit.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/printable.hpp"
#include "core/store/json_bytes.hpp"
#include "core/text.hpp"
#include "core/utc_time.hpp"
#include "slurm/jobs.hpp"
#include "slurm/squeue.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>

namespace rv::app {

Result<void> check_time_left(std::int64_t wanted_s, std::int64_t limit_s, std::int64_t elapsed_s,
                             const std::string& request_id, const std::string& job_id)
{
  if (limit_s < 0) {
    return {}; // UNLIMITED
  }
  const auto left = std::max<std::int64_t>(0, limit_s - elapsed_s);
  if (wanted_s <= left) {
    return {};
  }
  return fail(ErrorCode::usage,
              fmt::format("--time {} is longer than the {} left of allocation {} (request {})",
                          format_human_duration(wanted_s), format_human_duration(left), job_id, request_id),
              left >= 60 ? fmt::format("ask for {} or less, or hold a longer one: rv up --keep --time {}",
                                       format_human_duration(left), format_human_duration(wanted_s))
                         : fmt::format("the allocation is about to end; hold a new one: rv up --keep --time {}",
                                       format_human_duration(wanted_s)));
}

Result<void> check_not_container(const model::JobRequest& request, const std::string& request_id)
{
  if (!request.container) {
    return {};
  }
  return fail(ErrorCode::usage,
              fmt::format("request {} runs its command in a container ({}): rv run --in would run this one on the "
                          "node, outside it",
                          request_id, printable(request.container->image.text)),
              "run it in the allocation's shell (rv up --container ...), or as a request of its own: rv run "
              "--container IMAGE CMD");
}

Result<model::Strategy> strategy_from_plan(const nlohmann::json& plan, const std::string& id)
{
  const auto strategies = plan.is_object() ? plan.find("strategies") : plan.end();
  if (!plan.is_object() || strategies == plan.end() || !strategies->is_array()) {
    return fail(ErrorCode::parse, "the request's record keeps no plan",
                "it was written by an older rv: start a new one");
  }
  for (const auto& j : *strategies) {
    if (!j.is_object() || j.value("id", "") != id) {
      continue;
    }
    try {
      model::Strategy s;
      s.id = id;
      s.label = j.value("label", "");
      s.gpu_type = j.value("gpu_type", "");
      s.partition = j.value("partition", "");
      s.gres = j.value("gres", "");
      s.constraint = j.value("constraint", "");
      s.account = j.value("account", "");
      s.qos = j.value("qos", "");
      s.nodes = j.value("nodes", 1);
      s.gpus_per_node = j.value("gpus_per_node", 0);
      s.cpus_per_task = j.value("cpus_per_task", 1);
      s.mem_mb_per_node = j.value("mem_mb", std::int64_t{0});
      s.walltime_s = j.value("walltime_s", std::int64_t{0});
      s.time_min_s = j.value("time_min_s", std::int64_t{0});
      s.total_time_s = j.value("total_time_s", std::int64_t{0});
      return s; // the kind stays direct: a step is never a checkpoint segment
    } catch (const nlohmann::json::exception& e) {
      return fail(ErrorCode::parse, fmt::format("strategy {} in the request's plan: {}", id, e.what()));
    }
  }
  return fail(ErrorCode::parse, fmt::format("strategy {} is not in the request's plan", id));
}

std::vector<std::string> in_step_argv(const std::string& job_id, std::size_t nodes, bool every_node,
                                      const std::string& name, const std::string& program)
{
  slurm::StepOptions step;
  step.job_id = job_id;
  step.nodes = every_node ? std::max<std::size_t>(1, nodes) : 1;
  step.labelled = every_node && nodes > 1; // each line says which node printed it
  step.name = name;
  return slurm::step_argv(step, {"bash", "-c", program});
}

namespace {

// The time limit and run time of running job `job_id` (one squeue).
Result<std::pair<std::int64_t, std::int64_t>> limit_and_elapsed(Env& env, const std::string& job_id)
{
  RV_TRY(o, env.cluster.run(slurm::command(slurm::squeue_argv({job_id}))));
  if (o.status() != 0) {
    return fail(ErrorCode::slurm_rejected, fmt::format("squeue -j {}: {}", job_id, text::first_line(o.err)));
  }
  RV_TRY(rows, slurm::parse_squeue(o.out));
  for (const auto& r : rows) {
    if (r.job_id == job_id) {
      return std::pair{r.time_limit_s, r.elapsed_s};
    }
  }
  return fail(ErrorCode::generic, fmt::format("squeue no longer lists job {}", job_id),
              "the allocation has ended: `rv ps -a` shows how");
}

// Without -f: the step's srun started in the background on the login node; wait (briefly) until
// Slurm lists the step or it has already ended, so that a refusal is not lost.
Result<int> start_detached(Env& env, const std::string& request_id, StepRecord& step,
                           const std::vector<std::string>& argv)
{
  RV_TRY(started, env.cluster.run(slurm::command(slurm::detached_argv(argv))));
  if (started.status() != 0) {
    (void)end_step(env.requests, request_id, step.n, "failed", std::nullopt);
    return fail(ErrorCode::slurm_rejected,
                fmt::format("could not start the step's srun: {}", text::first_line(started.err)));
  }
  const auto deadline = env.clock.now() + std::chrono::seconds(30);
  while (true) {
    RV_TRY(live, job_steps(env.cluster, step.job_id));
    if (const auto* l = live_step(step, live)) {
      spdlog::info("{} runs as step {}.{}", step_ref(request_id, step.n), l->job_id, l->step_id);
      return 0;
    }
    RV_TRY(code, read_step_status(env.cluster, step));
    if (code) {
      (void)end_step(env.requests, request_id, step.n, *code == 0 ? "done" : "failed", code);
      spdlog::info("{} already ended: exit {}", step_ref(request_id, step.n), *code);
      return 0;
    }
    if (interrupt_signal() != 0) { // the step may start still: say how to find and stop it
      return fail(ErrorCode::interrupted, fmt::format("stopped waiting for {} to start", step_ref(request_id, step.n)),
                  fmt::format("rv ps {} shows it; rv stop {} stops it", request_id, step_ref(request_id, step.n)));
    }
    if (env.clock.now() >= deadline) {
      (void)end_step(env.requests, request_id, step.n, "failed", std::nullopt);
      return fail(
          ErrorCode::slurm_rejected,
          fmt::format("{} did not start within 30 s in job {}", step_ref(request_id, step.n), step.job_id),
          fmt::format("its srun's own words are lost without -f: try again with rv run -f --in {}", request_id));
    }
    env.clock.sleep_for(std::chrono::milliseconds(500));
  }
}

// With -f: srun in the foreground, its output streamed; Ctrl-C cancels the step, not the job.
Result<int> run_followed(Env& env, const std::string& request_id, const StepRecord& step,
                         const std::vector<std::string>& argv)
{
  proc::Command c;
  c.argv = argv;
  c.timeout = std::chrono::milliseconds(0);
  if (!env.json) { // with --json the output comes back in one document, as rv up --run's does
    c.on_stdout = [&](std::string_view s) { env.output.out(s); };
    c.on_stderr = [&](std::string_view s) { env.output.err(s); };
  }
  auto o = env.cluster.run(c);
  if (interrupt_signal() != 0 || (!o && o.error().code == ErrorCode::interrupted)) {
    const int sig = interrupt_signal() != 0 ? interrupt_signal() : SIGINT;
    clear_interrupt(); // the scancel below must run
    auto cancelled = cancel_step(env.cluster, step);
    (void)end_step(env.requests, request_id, step.n, "cancelled", 128 + sig);
    if (!cancelled) {
      spdlog::warn("could not cancel {}: {}; `rv stop {}` does", step_ref(request_id, step.n),
                   cancelled.error().message, step_ref(request_id, step.n));
    } else {
      spdlog::info("cancelled {}; allocation {} goes on", step_ref(request_id, step.n), step.job_id);
    }
    return 128 + sig;
  }
  if (!o) {
    (void)end_step(env.requests, request_id, step.n, "failed", std::nullopt);
    return std::unexpected(o.error());
  }
  const int code = o->status();
  (void)end_step(env.requests, request_id, step.n, code == 0 ? "done" : "failed", code);
  if (env.json) {
    env.output.out(store::dump_for_display({{"ref", step_ref(request_id, step.n)},
                                            {"request", request_id},
                                            {"job_id", step.job_id},
                                            {"exit_code", code},
                                            {"stdout", o->out},
                                            {"stderr", o->err}}) +
                   "\n");
  }
  return code;
}

} // namespace

Result<int> run_in(Env& env, const InOrder& order, const std::vector<std::string>& command)
{
  // Where: the request's running job (one poll), its strategy from the record.
  RV_TRY(target, running_target(env, order.key, 0));
  RV_TRY(rec, find_request(env.requests, target.request_id));
  auto job =
      std::find_if(rec.jobs.begin(), rec.jobs.end(), [&](const JobRecord& j) { return j.job_id == target.job_id; });
  if (job == rec.jobs.end()) {
    return fail(ErrorCode::generic, fmt::format("job {} is not in request {}'s record", target.job_id, rec.id));
  }
  RV_TRY(strategy, strategy_from_plan(rec.plan, job->strategy_id));
  auto request = request_options_from_json(rec.options).value_or(model::JobRequest{});
  RV_TRY_VOID(check_not_container(request, rec.id));
  // An allocation too short for --time is refused before anything is sent.
  if (order.time_s) {
    RV_TRY(le, limit_and_elapsed(env, target.job_id));
    RV_TRY_VOID(check_time_left(*order.time_s, le.first, le.second, rec.id, target.job_id));
  }
  request.job_name = rec.name;
  request.allow_checkpoint = false;

  // What: the project synced and snapshotted as for any run; the secrets written where the job's are.
  RV_TRY(smart, prepare_run(env, command, order.smart));
  RV_TRY(secrets, job_secrets(env, rec.id, false));
  RV_TRY(paths, prepare_remote(env.cluster, env.settings, rec.id, secrets.text, smart.workdir));
  const std::string secrets_file = secrets.text.empty() ? std::string() : paths.requests + "/" + rec.id + "/env";
  if (!secrets_file.empty() && rec.secrets_file != secrets_file) {
    // Recorded, so that the file goes when the request ends (app/request/reap.hpp).
    RV_TRY(kept, env.requests.update(rec.id, [&](nlohmann::json& r) {
      r["secrets_file"] = secrets_file;
      r["secrets"] = secrets.names;
    }));
    (void)kept;
  }

  const std::string line = command_line_of(command);
  const bool every_node = !order.one && target.nodes.size() > 1;
  StepRecord step;
  step.job_id = target.job_id;
  step.name = rec.name;
  step.log_base = paths.logs + "/" + rec.name + "-" + target.job_id;
  step.command = line;
  step.workdir = smart.workdir;
  step.nodes = every_node ? static_cast<int>(target.nodes.size()) : 1;
  step.created_at = utc_iso(env.clock.epoch_seconds());
  step.state = "running";
  RV_TRY(numbered, add_step(env.requests, rec.id, step));
  step = std::move(numbered);
  const auto ref = step_ref(rec.id, step.n);

  auto ro = render_options(rec, paths, line, smart.workdir, smart.extras);
  ro.secrets_file = secrets_file;
  ro.env = order.env;
  ro.outputs.clear();
  ro.preflight = false;       // the allocation's nodes passed it when it started
  ro.watchdog.interval_s = 0; // the allocation's own watchdog samples its GPUs
  auto program = templates::render_step(strategy, request, ro, {every_node, step.log_base});
  if (!program) {
    (void)end_step(env.requests, rec.id, step.n, "failed", std::nullopt);
    return std::unexpected(program.error());
  }
  const auto argv = in_step_argv(target.job_id, target.nodes.size(), every_node, step.name, *program);
  const auto where = every_node ? fmt::format("{} nodes ({})", target.nodes.size(), text::join(target.nodes, ","))
                                : target.nodes.front();
  if (!order.follow) {
    RV_TRY(code, start_detached(env, rec.id, step, argv));
    if (env.json) {
      auto j = to_json(step);
      j["ref"] = ref;
      j["request"] = rec.id;
      env.output.out(store::dump_for_display(j) + "\n");
    } else if (env.quiet) {
      env.output.out(ref + "\n");
    } else {
      env.output.out(fmt::format("started {} in job {} on {}\n", ref, target.job_id, where) +
                     text::next_steps({{"rv logs " + ref, "its output"},
                                       {"rv ps " + rec.id, "its steps"},
                                       {"rv stop " + ref, "stop this step; the allocation stays"}}));
    }
    return code;
  }
  spdlog::info("{}: in job {} on {}", ref, target.job_id, where);
  return run_followed(env, rec.id, step, argv);
}

} // namespace rv::app
