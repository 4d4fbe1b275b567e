#include "cli/launch.hpp"

#include "cli/commands.hpp"
#include "cli/follow.hpp"
#include "cli/reap.hpp"
#include "cli/requests.hpp"
#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/process/shell.hpp"
#include "core/secrets.hpp"
#include "slurm/monitor.hpp"
#include "slurm/sacct.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/gpu_faults.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/submit.hpp"
#include "templates/render.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <unistd.h>

namespace rv::cli {
namespace {

std::string utc_now_iso()
{
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Resolved remote paths for one request.
struct RemotePaths {
  std::string root, logs, checkpoints, outputs, cache, requests;
};

// Asks the login node for $HOME (one round trip) and creates rv's directories there. With
// `secrets` (an env_script), also writes them to <root>/requests/<id>/env, 0600, through stdin:
// before any sbatch, so no job can start without them, and never in argv.
Result<RemotePaths> prepare_remote(proc::Runner& runner, const Config& config, const std::string& request_id,
                                   const std::string& secrets)
{
  std::string root = config.get("remote_root");
  std::string scratch = config.get("scratch_root");
  proc::Command cmd;
  // $HOME expands on the login node; the configured paths travel as positional arguments.
  cmd.argv = {"sh", "-c",
              "case $1 in '~'|'~/'*) r=\"$HOME${1#\\~}\";; *) r=$1;; esac; "
              "case $2 in '') c=\"$r/cache\";; '~'|'~/'*) c=\"$HOME${2#\\~}\";; *) c=$2;; esac; "
              "mkdir -p \"$r/logs\" \"$r/checkpoints\" \"$r/outputs\" \"$r/requests\" \"$c\" && "
              "chmod 700 \"$r\" && "
              "{ [ -z \"$3\" ] || ( umask 077 && d=\"$r/requests/$3\" && mkdir -p \"$d\" && "
              "cat >\"$d/env.tmp\" && mv -f \"$d/env.tmp\" \"$d/env\" ); } && "
              "printf '%s\\n%s\\n' \"$r\" \"$c\"",
              "rv-prepare", root, scratch, secrets.empty() ? std::string() : request_id};
  if (!secrets.empty()) {
    cmd.stdin_data = secrets;
  }
  cmd.timeout = std::chrono::seconds(30);
  RV_TRY(out, runner.run(cmd));
  auto nl = out.out.find('\n');
  if (!out.ok() || nl == std::string::npos) {
    return fail(ErrorCode::io, fmt::format("cannot create rv's directories under {} on {}: {}", root, runner.where(), out.err),
                "check the `remote_root` setting and that the cluster's home is writable");
  }
  RemotePaths p;
  p.root = out.out.substr(0, nl);
  p.cache = out.out.substr(nl + 1, out.out.find('\n', nl + 1) - nl - 1);
  p.logs = p.root + "/logs";
  p.checkpoints = p.root + "/checkpoints";
  p.outputs = p.root + "/outputs";
  p.requests = p.root + "/requests";
  if (!p.root.starts_with("/")) {
    return fail(ErrorCode::config, fmt::format("remote_root resolved to a relative path '{}'", p.root));
  }
  return p;
}

std::string short_hash(const std::string& text)
{
  return fmt::format("{:08x}", static_cast<std::uint32_t>(std::hash<std::string>{}(text)));
}

std::string join(const std::vector<std::string>& words, const char* sep)
{
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : sep) + w;
  }
  return out;
}

} // namespace

namespace {

// Warns when the winning node's real GPU type differs from the strategy's (a partition can
// hold nodes of another type), and, for multi-node jobs only, about the network between nodes.
void check_allocation(proc::Runner& runner, const JobRecord& winner)
{
  if (winner.nodes > 1) {
    spdlog::warn("{} spans {} nodes: GPUs on different nodes talk over the network (NCCL over InfiniBand or "
                 "Ethernet), not NVLink",
                 winner.job_id, winner.nodes);
  }
  if (winner.node_list.empty() || winner.gpu_type.empty()) {
    return;
  }
  auto hosts = slurm::expand_hostlist(winner.node_list);
  if (!hosts || hosts->empty()) {
    return;
  }
  proc::Command c;
  c.argv = {"scontrol", "-o", "show", "node", hosts->front()};
  c.timeout = std::chrono::seconds(30);
  auto o = runner.run(c);
  if (!o || !o->ok()) {
    return;
  }
  auto nodes = slurm::parse_scontrol_nodes(o->out);
  if (!nodes || nodes->empty()) {
    return;
  }
  std::string types;
  for (const auto& g : nodes->front().gpus) {
    if (g.type == winner.gpu_type) {
      return;
    }
    types += (types.empty() ? "" : ",") + (g.type.empty() ? std::string("untyped") : g.type);
  }
  spdlog::warn("job {} asked for {} GPUs but node {} has {}: the partition mixes GPU types", winner.job_id,
               winner.gpu_type, hosts->front(), types.empty() ? "no GPUs" : types);
}

struct Launched {
  RequestRecord rec;
  RemotePaths paths;
};

// Records the request, renders and submits every strategy in one round trip, records the job
// ids and prints them. Fails when nothing could be submitted.
Result<Launched> submit_request(Context& ctx, proc::Runner& runner, const PlanRun& planned,
                                const std::string& command_line, const std::string& workdir, const char* kind,
                                const RunExtras& extras = {})
{
  const auto& plan = planned.plan;
  if (plan.strategies.empty()) {
    return std::unexpected(strategy::no_viable_strategy(plan));
  }
  secrets::Store secret_store(secrets::Store::default_path());
  RV_TRY(secret_vars, secret_store.load());
  const std::string request_id = extras.request_id.empty() ? store::new_request_id() : extras.request_id;
  RV_TRY(paths, prepare_remote(runner, ctx.config, request_id,
                               secret_vars.empty() ? std::string() : secrets::env_script(secret_vars)));

  // The record exists before the first sbatch, so that nothing submitted is ever unknown.
  auto store = request_store();
  RequestRecord rec;
  rec.id = request_id;
  for (const auto& v : secret_vars) {
    rec.secrets.push_back(v.name);
  }
  if (!secret_vars.empty()) {
    rec.secrets_file = paths.requests + "/" + rec.id + "/env";
  }
  rec.created_at = utc_now_iso();
  rec.host = runner.where();
  rec.kind = kind;
  rec.command = command_line;
  rec.workdir = workdir;
  rec.remote_root = paths.root;
  rec.log_dir = paths.logs;
  rec.plan = strategy::to_json(plan);
  rec.sync = extras.sync;
  rec.name = planned.request.job_name.empty() ? "rv-" + rec.id : planned.request.job_name;
  for (const auto& s : plan.strategies) {
    JobRecord& j = rec.jobs.emplace_back();
    j.strategy_id = s.id;
    j.label = s.label;
    j.partition = s.partition;
    j.gpu_type = s.gpu_type;
    j.nodes = s.nodes;
  }
  if (auto c = store.create(rec.id, to_json(rec)); !c) {
    remove_secrets(runner, store, {&rec}, true); // nothing was submitted: the secrets must not stay behind
    return std::unexpected(c.error());
  }

  templates::RenderOptions ro;
  ro.request_id = rec.id;
  ro.command = rec.command;
  ro.workdir = workdir;
  ro.log_dir = paths.logs;
  ro.remote_root = paths.root;
  ro.checkpoint_root = paths.checkpoints;
  ro.project_key = !extras.project_key.empty() ? extras.project_key : "p" + short_hash(workdir.empty() ? "home" : workdir);
  ro.output_root = paths.outputs;
  ro.cache_root = paths.cache;
  ro.setup = extras.setup;
  ro.venv = extras.venv;
  ro.outputs = extras.outputs;
  ro.secrets_file = rec.secrets_file;
  ro.consume_secrets = std::string_view(kind) == "run"; // `rv up` shells read it after the job started
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
  auto submitted = slurm::submit_all(runner, subs);
  if (!submitted) {
    // Some sbatch of the batch may have run before the failure: find those jobs by their comment
    // and cancel them now; if that cannot run, the record stays searchable for `rv ps`.
    clear_interrupt(); // so that the cleanup's commands run
    const bool interrupted = submitted.error().code == ErrorCode::interrupted;
    auto settled = settle_failed_submission(runner, store, rec, interrupted ? "cancelled" : "failed");
    remove_secrets(runner, store, {&rec}, true);
    return fail(submitted.error().code, fmt::format("{} (request {}: {})", submitted.error().message, rec.id, settled),
                submitted.error().hint);
  }
  for (std::size_t k = 0; k < submitted->size(); ++k) {
    auto& job = rec.jobs[sub_index[k]];
    job.job_id = (*submitted)[k].job_id;
    job.error = (*submitted)[k].error;
    job.state = job.job_id.empty() ? "REFUSED" : "PENDING";
  }
  rec.state = rec.job_ids().empty() ? "failed" : "submitted";
  save(store, rec);

  if (!ctx.global.json) {
    std::fputs(fmt::format("request {} ({}): {} {} on {}\n", rec.id, rec.name, rec.jobs.size(), rec.jobs.size() == 1 ? "strategy" : "strategies", rec.host).c_str(),
               stdout);
    for (const auto& j : rec.jobs) {
      std::fputs(fmt::format("  {:<4} {:<10} {}{}\n", j.strategy_id, j.job_id.empty() ? "-" : j.job_id, j.label,
                             j.error.empty() ? "" : "  REFUSED: " + j.error)
                     .c_str(),
                 stdout);
    }
    std::fflush(stdout);
  }
  if (rec.job_ids().empty()) {
    remove_secrets(runner, store, {&rec}, true);
    return fail(ErrorCode::slurm_rejected, fmt::format("Slurm refused every strategy of request {}", rec.id),
                "the reasons are listed above; try --dry-run -v");
  }
  return Launched{std::move(rec), std::move(paths)};
}

// Races the submitted siblings: the first to start wins, the others are cancelled, Ctrl-C or
// an error cancels everything. Returns the winner's strategy id (also in `l.rec.winner`).
Result<JobRecord> race_request(proc::Runner& runner, Launched& l)
{
  auto store = request_store();
  auto& rec = l.rec;
  const auto& paths = l.paths;
  // The race: first to start wins; the others are cancelled; Ctrl-C cancels everything.
  std::vector<slurm::RaceEntry> entries;
  for (const auto& j : rec.jobs) {
    if (!j.job_id.empty()) {
      entries.push_back(slurm::RaceEntry{j.strategy_id, j.job_id, {}, false, {}});
    }
  }
  slurm::Race race(std::move(entries));
  SystemClock clock;
  slurm::MonitorOptions mo;
  mo.claim_argv = {"cat", paths.requests + "/" + rec.id + "/claim/owner"};
  mo.on_update = [&](const slurm::Race& rc, const slurm::RaceDecision&) {
    for (const auto& e : rc.entries()) {
      for (auto& j : rec.jobs) {
        if (j.job_id == e.job_id) {
          apply_view(j, e.last);
        }
      }
    }
    if (rc.winner()) {
      rec.winner = rc.entries()[*rc.winner()].strategy_id;
      rec.state = "won";
    }
    save(store, rec);
  };
  const auto race_start = std::chrono::steady_clock::now();
  auto stats = slurm::run_race(runner, clock, race, mo);
  if (!stats) {
    rec.state = stats.error().code == ErrorCode::interrupted || stats.error().code == ErrorCode::timeout ? "cancelled"
                                                                                                       : "failed";
    save(store, rec);
    clear_interrupt(); // so that the cleanup's one command runs
    remove_secrets(runner, store, {&rec}, true);
    return std::unexpected(stats.error());
  }
  const auto* winner = rec.winner_job();
  if (!winner) {
    return fail(ErrorCode::generic, "the race ended without a winner");
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - race_start).count();
  std::string siblings;
  if (!stats->cancelled.empty()) {
    siblings = "; cancelled " + join(stats->cancelled, " ");
  } else if (rec.jobs.size() > 1) {
    siblings = "; its siblings had already ended (the winner's guard cancels them as it starts)";
  }
  spdlog::info("{} won: job {} on {} after {:.1f} s ({}){}", winner->strategy_id, winner->job_id,
               winner->node_list.empty() ? "?" : winner->node_list, secs, winner->label, siblings);
  check_allocation(runner, *winner);
  return *winner;
}

// A job that fails this soon after starting with a GPU-fault signature is retried elsewhere.
constexpr std::int64_t k_hardware_retry_window_s = 300;
constexpr int k_hardware_retries = 2;

// The GPU-fault signature in the tail of the winner's stderr logs (per-node logs too), or "".
std::string gpu_fault_in_logs(proc::Runner& runner, const RequestRecord& rec, const JobRecord& job)
{
  proc::Command c;
  c.argv = {"sh", "-c", "tail -q -n 100 \"$1\" \"$2\".node*.err 2>/dev/null; true", "rv-fault",
            log_path(rec, job, true), fmt::format("{}/{}-{}", rec.log_dir, rec.name, job.job_id)};
  c.timeout = std::chrono::seconds(30);
  auto o = runner.run(c);
  return o ? slurm::find_gpu_fault(o->out) : std::string();
}

} // namespace

Result<int> launch_run(Context& ctx, proc::Runner& runner, const PlanRun& planned, const std::vector<std::string>& command,
                       const std::string& workdir, bool follow, const RunExtras& extras)
{
  // One word is a shell command line; several words are an argv, quoted so they arrive exactly.
  const std::string line = command.size() == 1 ? command.front() : proc::shell_join(command);
  PlanRun current = planned;
  for (int attempt = 0;; ++attempt) {
    // A retry is a new request (new id) that runs from the same snapshot.
    RunExtras this_try = extras;
    if (attempt > 0) {
      this_try.request_id.clear();
    }
    RV_TRY(launched, submit_request(ctx, runner, current, line, workdir, "run", this_try));
    if (!follow) {
      if (ctx.global.json) {
        print_json(to_json(launched.rec));
      }
      return 0;
    }
    RV_TRY(winner, race_request(runner, launched));
    auto store = request_store();
    auto& rec = launched.rec;
    SystemClock clock;
    auto status = follow_job(runner, clock, rec, winner, 0, 0, [&](const std::string& prev, const std::string& next) {
      record_next_segment(store, rec, prev, next);
      winner.job_id = next;
    });
    if (!status) {
      return std::unexpected(status.error());
    }
    rec.state = "done";
    for (auto& j : rec.jobs) {
      if (j.strategy_id == rec.winner) {
        j.state = status->state;
      }
    }
    save(store, rec);
    remove_secrets(runner, store, {&rec}, true);
    // Hardware retry: failed within minutes of starting (queue time does not count), with a
    // known GPU-fault signature: plan again without the node(s), at most twice.
    if (status->state == "FAILED" && attempt < k_hardware_retries && status->run_time_s >= 0 &&
        status->run_time_s <= k_hardware_retry_window_s) {
      if (auto fault = gpu_fault_in_logs(runner, rec, winner); !fault.empty()) {
        auto nodes = slurm::expand_hostlist(winner.node_list);
        if (nodes && !nodes->empty()) {
          spdlog::warn("job {} failed after {} s with a GPU fault ('{}') on {}: retrying without {} ({}/{})",
                       winner.job_id, status->run_time_s, fault, winner.node_list, winner.node_list, attempt + 1,
                       k_hardware_retries);
          auto request = current.request;
          request.exclude_nodes.insert(request.exclude_nodes.end(), nodes->begin(), nodes->end());
          RV_TRY(replanned, make_plan(ctx, runner, request, current.options));
          current = std::move(replanned);
          continue;
        }
      }
    }
    return exit_code_of(*status, status->job_id);
  }
}

Result<int> launch_up(Context& ctx, proc::Runner& runner, const PlanRun& planned, const std::string& command)
{
  // The allocation holds its nodes with a sleep; the shell or CMD joins it with srun --overlap.
  RV_TRY(launched, submit_request(ctx, runner, planned, "exec sleep 2147483647", "", "up"));
  RV_TRY(winner, race_request(runner, launched));
  auto store = request_store();
  if (ctx.global.json) {
    print_json(to_json(launched.rec));
    return 0; // the allocation stays: `rv stop` releases it
  }
  std::vector<std::string> srun = {"srun", "--jobid=" + winner.job_id, "--overlap", "--nodes=1", "--ntasks=1"};
  // The shell on the node starts from srun's environment on the login node: it reads the
  // secrets itself (file name in $0, never the values in argv).
  const auto& secrets_file = launched.rec.secrets_file;
  const std::string load_secrets = secrets_file.empty() ? "" : "[ ! -r \"$0\" ] || . \"$0\"; ";
  Result<int> status = 0;
  if (!command.empty()) {
    proc::Command c;
    c.argv = srun;
    if (secrets_file.empty()) {
      c.argv.insert(c.argv.end(), {"bash", "-c", command});
    } else {
      c.argv.insert(c.argv.end(), {"bash", "-c", load_secrets + "eval \"$1\"", secrets_file, command});
    }
    c.timeout = std::chrono::milliseconds(0);
    c.on_stdout = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); std::fflush(stdout); };
    c.on_stderr = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stderr); };
    auto o = runner.run(c);
    status = o ? Result<int>(o->status()) : Result<int>(std::unexpected(o.error()));
  } else {
    if (secrets_file.empty()) {
      srun.insert(srun.end(), {"--pty", "bash", "-l"});
    } else {
      srun.insert(srun.end(), {"--pty", "bash", "-c", load_secrets + "exec bash -l", secrets_file});
    }
    status = runner.run_interactive(srun);
  }
  // Release the allocation whatever happened to the shell or the command.
  clear_interrupt();
  if (auto c = slurm::cancel_jobs(runner, {winner.job_id}); !c) {
    spdlog::warn("could not release allocation {}: {}", winner.job_id, c.error().message);
  }
  launched.rec.state = "done";
  save(store, launched.rec);
  remove_secrets(runner, store, {&launched.rec}, true);
  return status;
}

} // namespace rv::cli
