#include "templates/render.hpp"

#include "templates/detail.hpp"

#include "core/process/shell.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace rv::templates {
namespace detail {

std::string fill(std::string_view text, const Vars& vars)
{
  std::string out;
  out.reserve(text.size() + 256);
  std::size_t pos = 0;
  while (true) {
    auto open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      throw std::logic_error("template: unclosed placeholder");
    }
    out.append(text.substr(pos, open - pos));
    auto name = text.substr(open + 2, close - open - 2);
    auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; });
    if (it == vars.end()) {
      throw std::logic_error(fmt::format("template: no value for {{{{{}}}}}", name));
    }
    out.append(it->second);
    pos = close + 2;
  }
}

std::string sbatch_quote(std::string_view value)
{
  return proc::double_quote(value);
}

} // namespace detail

Result<bool> check_output_path(std::string_view path)
{
  return detail::check_output_path(path);
}

Result<std::string> normalize_signal(std::string_view name)
{
  auto up = text::upper(name);
  if (up.starts_with("SIG")) {
    up.erase(0, 3);
  }
  constexpr std::array<std::string_view, 9> allowed{"USR1", "USR2", "TERM", "INT", "HUP",
                                                    "QUIT", "ALRM", "URG",  "XCPU"};
  if (std::find(allowed.begin(), allowed.end(), up) == allowed.end()) {
    return fail(ErrorCode::usage, fmt::format("unsupported checkpoint signal '{}'", name),
                "use USR1 (default), USR2 (submitit), TERM, INT, HUP, QUIT, ALRM, URG or XCPU");
  }
  return up;
}

Result<std::int64_t> effective_signal_lead(std::int64_t walltime_s, std::int64_t lead_s)
{
  constexpr std::int64_t jitter_s = 60;   // Slurm may signal up to 60 s early
  constexpr std::int64_t min_run_s = 30;  // a segment runs at least this long
  constexpr std::int64_t min_lead_s = 30; // time to write a checkpoint and requeue
  if (lead_s < min_lead_s || lead_s > 65535) {
    return fail(ErrorCode::usage, fmt::format("checkpoint signal lead {} s is out of range", lead_s),
                "use 30 to 65535 seconds");
  }
  auto lead = std::min(lead_s, walltime_s - jitter_s - min_run_s);
  if (lead < min_lead_s) {
    return fail(ErrorCode::usage, fmt::format("a {} s segment is too short for checkpointing", walltime_s),
                "checkpoint segments need at least 120 s of walltime (30 s run, 60 s signal jitter, 30 s lead)");
  }
  return lead;
}

namespace {

// The checked inputs as a Context; the caller keeps `job_name` alive beside it.
Result<detail::Context> make_context(const model::Strategy& strategy, const model::JobRequest& request,
                                     const RenderOptions& options, const std::string& job_name, bool shell_step = false)
{
  if (auto ok = detail::check_inputs(strategy, request, options, shell_step); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = detail::check_name("job name", job_name, false); !ok) {
    return std::unexpected(ok.error());
  }
  RV_TRY(signal, normalize_signal(options.signal));
  return detail::Context{strategy, request, options, job_name, signal, 0, {}, false, false, false, 1};
}

std::string job_name_of(const model::JobRequest& request)
{
  return request.job_name.empty() ? std::string("rv-job") : request.job_name;
}

} // namespace

Result<std::string> render_step_environment(const model::Strategy& strategy, const model::JobRequest& request,
                                            const RenderOptions& options)
{
  const auto job_name = job_name_of(request);
  // An empty command is rv up's interactive shell: the caller runs a shell after the environment.
  RV_TRY(ctx, make_context(strategy, request, options, job_name, true));
  ctx.step = true; // one task on one node: the command runs as a single-node job runs it
  ctx.launch = inject_launcher_flags(options.command, false);
  ctx.local_ranks = ctx.launch.kind != LauncherKind::none ? std::max(1, strategy.gpus_per_node) : 1;
  return detail::preamble(ctx);
}

namespace {

// A multi-node step's task: its node's place, the same on every node without talking to the others.
constexpr std::string_view k_step_node = R"sh(
# ---- this node's place in the step (rv run --in on every node) ----
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1)
[ -n "$MASTER_ADDR" ] || MASTER_ADDR="${SLURMD_NODENAME:-$(hostname)}"
MASTER_PORT=$(( 20000 + (${SLURM_JOB_ID:-0} + 997 * ${SLURM_STEP_ID:-0}) % 20000 ))
export MASTER_ADDR MASTER_PORT
export RV_NNODES="${SLURM_STEP_NUM_NODES:-{{nodes}}}"
export NODE_RANK="$SLURM_NODEID" RV_NODE_RANK="$SLURM_NODEID" RANK="$SLURM_NODEID"
export LOCAL_RANK=0 WORLD_SIZE="$RV_NNODES"
_rv_step_log={{log_base}}.node"$SLURM_NODEID"
)sh";

// The command, its stdout and stderr apart and each copied to its log (a pipeline: bash waits for
// both tee's, so no line is lost), then its status kept beside them.
constexpr std::string_view k_step_run = R"sh(
# ---- run; the output is also kept in the step's log ----
{ {{run}}bash -c "$RV_COMMAND" 2>&1 1>&3 3>&- | tee -a -- "$_rv_step_log.err" 1>&2 3>&-; exit "${PIPESTATUS[0]}"; } 3>&1 |
  tee -a -- "$_rv_step_log.out"
_rv_status=${PIPESTATUS[0]}
printf '%s\n' "$_rv_status" >"$_rv_step_log.status" 2>/dev/null || true
exit "$_rv_status"
)sh";

} // namespace

Result<std::string> render_step(const model::Strategy& strategy, const model::JobRequest& request,
                                const RenderOptions& options, const StepProgram& step)
{
  if (step.log_base.empty() || !step.log_base.starts_with('/') ||
      step.log_base.find_first_of("\n\r") != std::string::npos) {
    return fail(ErrorCode::usage, fmt::format("the step's log path {:?} is not an absolute path", step.log_base));
  }
  const auto job_name = job_name_of(request);
  RV_TRY(ctx, make_context(strategy, request, options, job_name));
  ctx.step = true;
  ctx.multi_node = step.every_node && strategy.nodes > 1;
  ctx.launch = inject_launcher_flags(options.command, ctx.multi_node);
  ctx.local_ranks = ctx.launch.kind != LauncherKind::none ? std::max(1, strategy.gpus_per_node) : 1;
  std::string out = detail::preamble(ctx);
  if (ctx.multi_node) {
    out += detail::fill(k_step_node,
                        {{"nodes", std::to_string(strategy.nodes)}, {"log_base", proc::shell_quote(step.log_base)}});
  } else {
    out += fmt::format("_rv_step_log={}\n", proc::shell_quote(step.log_base));
  }
  return out + detail::fill(k_step_run, {{"run", detail::container_prefix(ctx, false)}});
}

std::string step_tail(const RenderOptions& options, bool shell)
{
  if (!options.container) { // a non-login interactive shell: a login shell's profile would reset PATH (and the venv)
    return shell ? "exec bash -i\n" : "bash -c \"$RV_COMMAND\"\n";
  }
  const bool pyxis = options.container->choice.runtime == model::ContainerRuntime::pyxis;
  return shell ? (pyxis ? "_rv_ct --pty bash -i\nexit $?\n" : "_rv_ct bash -i\nexit $?\n")
               : "_rv_ct bash -c \"$RV_COMMAND\"\nexit $?\n";
}

Result<std::string> render(const model::Strategy& strategy, const model::JobRequest& request,
                           const RenderOptions& options)
{
  const auto job_name = job_name_of(request);
  RV_TRY(ctx, make_context(strategy, request, options, job_name));
  ctx.multi_node = strategy.nodes > 1;
  ctx.checkpoint = strategy.kind == model::StrategyKind::checkpoint;
  if (ctx.checkpoint) {
    RV_TRY(lead, effective_signal_lead(strategy.walltime_s, options.signal_lead_s));
    ctx.signal_lead_s = lead;
  }
  ctx.launch = inject_launcher_flags(options.command, ctx.multi_node);
  ctx.local_ranks = ctx.launch.kind != LauncherKind::none ? std::max(1, strategy.gpus_per_node) : 1;
  const bool study = !options.study.tasks.empty();
  if (study && (ctx.multi_node || ctx.checkpoint)) {
    return fail(ErrorCode::usage, "a study's workers run on one node, without checkpoint segments",
                "drop --checkpoint, or ask for the GPUs of one node per task");
  }
  if (study && options.request_id.empty()) {
    return fail(ErrorCode::usage, "a study needs a request id", "its tasks are claimed in the request's directory");
  }

  std::string script = detail::sbatch_header(ctx);
  script += detail::preamble(ctx);
  if (ctx.multi_node) {
    script += detail::multi_node_setup(ctx);
  }
  if (study) {
    script += detail::study_body(ctx);
  } else if (ctx.checkpoint) {
    script += detail::checkpoint_body(ctx);
  } else if (ctx.multi_node) {
    script += detail::multi_node_body(ctx);
  } else {
    script += detail::single_body(ctx);
  }
  return script;
}

} // namespace rv::templates
