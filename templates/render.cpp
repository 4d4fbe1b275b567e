#include "templates/render.hpp"

#include "templates/detail.hpp"

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
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  out += '"';
  return out;
}

} // namespace detail

namespace {

bool is_name_char(char c)
{
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

Result<bool> check_name(std::string_view what, std::string_view value, bool allow_empty)
{
  if (value.empty() && allow_empty) {
    return true;
  }
  if (value.empty() || value.size() > 128 || !std::all_of(value.begin(), value.end(), is_name_char) ||
      value.front() == '-' || value.front() == '.') {
    return fail(ErrorCode::usage, fmt::format("invalid {} '{}'", what, value),
                "use 1-128 letters, digits, '_', '-' or '.', not starting with '-' or '.'");
  }
  return true;
}

Result<bool> check_path(std::string_view what, std::string_view path, bool required)
{
  if (path.empty()) {
    if (required) {
      return fail(ErrorCode::usage, fmt::format("no {} given", what),
                  "set it in the rv config (an absolute path on the cluster)");
    }
    return true;
  }
  if (path.front() != '/' || path.find('\0') != std::string_view::npos ||
      path.find('\n') != std::string_view::npos) {
    return fail(ErrorCode::usage, fmt::format("{} '{}' is not an absolute path", what, path),
                "give an absolute path on the cluster, without newlines");
  }
  return true;
}

Result<bool> check_directive(std::string_view what, std::string_view value)
{
  if (value.find_first_of("\n\r") != std::string_view::npos || value.find('\0') != std::string_view::npos) {
    return fail(ErrorCode::usage, fmt::format("{} contains a line break", what),
                "#SBATCH values must fit on one line");
  }
  return true;
}

Result<bool> check_inputs(const model::Strategy& s, const model::JobRequest& r, const RenderOptions& o)
{
  if (o.command.find_first_not_of(" \t\n") == std::string::npos) {
    return fail(ErrorCode::usage, "the command is empty", "give the command to run, e.g. `rv run python train.py`");
  }
  if (o.command.find('\0') != std::string::npos) {
    return fail(ErrorCode::usage, "the command contains a NUL byte", "remove it; shells cannot pass NUL bytes");
  }
  if (s.nodes < 1 || s.gpus_per_node < 0 || s.cpus_per_task < 1 || s.walltime_s <= 0 ||
      s.mem_mb_per_node < 0 || s.time_min_s < 0) {
    return fail(ErrorCode::usage,
                fmt::format("strategy {} has invalid resources (nodes {}, gpus/node {}, cpus {}, time {} s)",
                            s.id, s.nodes, s.gpus_per_node, s.cpus_per_task, s.walltime_s),
                "this is a planner bug; please report it with --dry-run output");
  }
  if (auto ok = check_name("request id", o.request_id, true); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_name("project key", o.project_key, true); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_directive("partition", s.partition); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_directive("GRES", s.gres); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_directive("GPU type", s.gpu_type); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_directive("constraint", s.constraint); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_directive("account", r.account); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_directive("QOS", r.qos); !ok) {
    return std::unexpected(ok.error());
  }
  for (const auto& node : r.exclude_nodes) {
    if (auto ok = check_directive("excluded node", node); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (auto ok = check_path("log directory", o.log_dir, true); !ok) {
    return std::unexpected(ok.error());
  }
  if (o.log_dir.find_first_of("\"\\%") != std::string::npos) {
    return fail(ErrorCode::usage, fmt::format("log directory '{}' contains '\"', '\\' or '%'", o.log_dir),
                "sbatch reads these itself in --output; choose another directory");
  }
  if (auto ok = check_path("remote root", o.remote_root, !o.request_id.empty()); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_path("checkpoint root", o.checkpoint_root, true); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_path("output root", o.output_root, true); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_path("cache root", o.cache_root, true); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_path("working directory", o.workdir, false); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_path("venv", o.venv, false); !ok) {
    return std::unexpected(ok.error());
  }
  for (const auto& m : o.modules) {
    if (m.empty() || m.find_first_of(" \t\n") != std::string::npos) {
      return fail(ErrorCode::usage, fmt::format("invalid module name '{}'", m), "give one module per entry, e.g. cuda/12.8.0");
    }
  }
  for (const auto& e : o.env) {
    bool ok = !e.name.empty() && !std::isdigit(static_cast<unsigned char>(e.name[0])) &&
              std::all_of(e.name.begin(), e.name.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
              });
    if (!ok || e.value.find('\0') != std::string::npos) {
      return fail(ErrorCode::usage, fmt::format("invalid environment variable name '{}'", e.name),
                  "use letters, digits and '_', not starting with a digit");
    }
  }
  return true;
}

} // namespace

Result<std::string> normalize_signal(std::string_view name)
{
  std::string up;
  for (char c : name) {
    up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
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
    return fail(ErrorCode::usage,
                fmt::format("a {} s segment is too short for checkpointing", walltime_s),
                "checkpoint segments need at least 120 s of walltime (30 s run, 60 s signal jitter, 30 s lead)");
  }
  return lead;
}

Result<std::string> render(const model::Strategy& strategy, const model::JobRequest& request,
                           const RenderOptions& options)
{
  if (auto ok = check_inputs(strategy, request, options); !ok) {
    return std::unexpected(ok.error());
  }
  std::string job_name = request.job_name.empty() ? std::string("rv-job") : request.job_name;
  if (auto ok = check_name("job name", job_name, false); !ok) {
    return std::unexpected(ok.error());
  }
  RV_TRY(signal, normalize_signal(options.signal));
  detail::Context ctx{strategy, request, options, job_name, signal, 0, {}, false, false, 1};
  ctx.multi_node = strategy.nodes > 1;
  ctx.checkpoint = strategy.kind == model::StrategyKind::checkpoint;
  if (ctx.checkpoint) {
    RV_TRY(lead, effective_signal_lead(strategy.walltime_s, options.signal_lead_s));
    ctx.signal_lead_s = lead;
  }
  ctx.launch = inject_launcher_flags(options.command, ctx.multi_node);
  ctx.local_ranks = ctx.launch.kind != LauncherKind::none ? std::max(1, strategy.gpus_per_node) : 1;

  std::string script = detail::sbatch_header(ctx);
  script += detail::preamble(ctx);
  if (ctx.multi_node) {
    script += detail::multi_node_setup(ctx);
  }
  if (ctx.checkpoint) {
    script += detail::checkpoint_body(ctx);
  } else if (ctx.multi_node) {
    script += detail::multi_node_body(ctx);
  } else {
    script += detail::single_body(ctx);
  }
  return script;
}

} // namespace rv::templates
