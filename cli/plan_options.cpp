#include "cli/plan_options.hpp"

#include "core/duration.hpp"
#include "core/model/cluster.hpp"
#include "core/process/shell.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>

namespace rv::cli {

void add_plan_flags(CLI::App* cmd, PlanFlags& f, bool with_dry_run)
{
  cmd->add_option("-g,--gpu", f.gpus, "GPUs in total (default 1)");
  cmd->add_option("-t,--type", f.type,
                  "GPU type or alias (a100, h200, ...), or any of several (a100,h100); default: any")
      ->type_name("TYPE");
  cmd->add_option("--time", f.time,
                  "work time: 30m, 2h, 1.5h, 1h30m, 3d, 2:59:00, 1-12:00:00, or a bare number of minutes (default 1h)")
      ->type_name("DURATION");
  cmd->add_option("--mem", f.mem, "memory per node: 200G, 512M (default: the GPU share of the node)")
      ->type_name("SIZE");
  cmd->add_option("--cpus", f.cpus, "CPUs per node (default: the GPU share of the node)");
  cmd->add_option("--vram", f.vram, "minimum GPU memory in GB (needs VRAM in the site profile)");
  cmd->add_flag("--single-node", f.single_node, "never split the GPUs over several nodes");
  cmd->add_option("--nodes", f.nodes, "exactly this many nodes, the GPUs split evenly (default: rv chooses)");
  cmd->add_flag("--mig", f.mig, "also consider MIG-like GPU slices (1 GPU only)");
  cmd->add_flag("--time-min", f.time_min, "the job copes with a shortened limit: allow --time-min strategies");
  cmd->add_flag("--checkpoint", f.checkpoint,
                "the program saves its state in $RV_CHECKPOINT_DIR and resumes from it: allow checkpoint-segment "
                "strategies (needed for --time beyond MaxTime; config `checkpoint`)");
  cmd->add_flag("--no-checkpoint", f.no_checkpoint, "no checkpoint-segment strategies, whatever the config says");
  cmd->add_option("--qos", f.qos, "Slurm QOS")->type_name("NAME");
  cmd->add_option("--exclude", f.exclude, "nodes never to use (comma list)")->type_name("NODES");
  cmd->add_option("--name", f.name, "job name (default rv-<request id>)")->type_name("NAME");
  cmd->add_option("--max-strategies", f.max_strategies, "most strategies to fan out to (config max_strategies)");
  cmd->add_flag("--no-cache", f.no_cache,
                "read every cluster fact now, not the cached static ones (config discovery_cache 0)");
  if (with_dry_run) {
    cmd->add_flag("--dry-run", f.dry_run, "show the probe windows and ranked strategies; submit nothing");
  }
}

RequestDefaults request_defaults(const Config& config)
{
  return {config.get("account"), config.get("qos"), config.get("checkpoint") == "true"};
}

Result<std::int64_t> time_asked_s(const PlanFlags& f)
{
  return parse_duration(f.time);
}

Result<model::JobRequest> to_request(const PlanFlags& f, const RequestDefaults& defaults)
{
  model::JobRequest r;
  if (f.checkpoint && f.no_checkpoint) {
    return fail(ErrorCode::usage, "--checkpoint and --no-checkpoint contradict each other", "give one of them");
  }
  if (f.gpus < 1) {
    return fail(ErrorCode::usage, fmt::format("--gpu must be at least 1, not {}", f.gpus),
                "for CPU-only work use sbatch directly");
  }
  if (f.gpus > model::max_request_gpus) {
    return fail(ErrorCode::usage, fmt::format("--gpu must be at most {}, not {}", model::max_request_gpus, f.gpus));
  }
  r.gpus = f.gpus;
  if (!f.type.empty() && std::isdigit(static_cast<unsigned char>(f.type.front())) && parse_duration(f.type)) {
    // sbatch's -t is the time limit; rv's is the GPU type.
    return fail(ErrorCode::usage, fmt::format("-t/--type is the GPU type, and '{}' is a time", f.type),
                fmt::format("did you mean --time {}? (sbatch's -t is rv's --time)", f.type));
  }
  if (!f.type.empty()) {
    r.gpu_type = f.type;
  }
  RV_TRY(secs, time_asked_s(f));
  // Slurm counts time limits in whole minutes (it rounds a seconds part up): plan what Slurm will
  // grant, and say so, rather than show `00:00:01` in the plan and get a minute (ux-review-3 N13).
  r.time_s = (secs + 59) / 60 * 60;
  if (r.time_s != secs) {
    spdlog::warn("--time {}: Slurm counts time limits in whole minutes; planning {}", f.time,
                 format_human_duration(r.time_s));
  }
  if (!f.mem.empty()) {
    RV_TRY(mb, parse_memory_mb(f.mem));
    r.mem_mb = mb;
  }
  if (f.cpus) {
    if (*f.cpus < 1) {
      return fail(ErrorCode::usage, fmt::format("--cpus must be at least 1, not {}", *f.cpus));
    }
    if (*f.cpus > model::max_node_cpus) {
      return fail(ErrorCode::usage, fmt::format("--cpus must be at most {}, not {}", model::max_node_cpus, *f.cpus));
    }
    r.cpus_per_task = *f.cpus;
  }
  if (f.vram) {
    if (*f.vram < 1) {
      return fail(ErrorCode::usage, fmt::format("--vram must be at least 1 (GB), not {}", *f.vram));
    }
    r.min_vram_gb = *f.vram;
  }
  if (f.nodes) {
    if (*f.nodes < 1 || *f.nodes > f.gpus || f.gpus % *f.nodes != 0) {
      return fail(ErrorCode::usage, fmt::format("--nodes {} does not split {} GPUs evenly", *f.nodes, f.gpus),
                  "the GPUs (--gpu) must be a multiple of the nodes: --gpu 8 --nodes 2 is 4 per node");
    }
    if (*f.nodes > 1 && f.single_node) {
      return fail(ErrorCode::usage, fmt::format("--nodes {} and --single-node contradict each other", *f.nodes));
    }
    r.nodes = *f.nodes;
  }
  r.single_node = f.single_node || (f.nodes && *f.nodes == 1);
  r.allow_mig = f.mig;
  r.allow_time_min = f.time_min;
  r.allow_checkpoint = f.checkpoint || (defaults.checkpoint && !f.no_checkpoint);
  r.account = defaults.account;
  r.qos = f.qos.empty() ? defaults.qos : f.qos;
  if (!f.exclude.empty()) {
    std::string_view rest = f.exclude;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      auto node = rest.substr(0, comma);
      if (!node.empty()) {
        r.exclude_nodes.emplace_back(node);
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  for (char c : f.name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return fail(ErrorCode::usage,
                  fmt::format("--name '{}' has a character other than letters, digits, - _ .", f.name));
    }
  }
  r.job_name = f.name;
  return r;
}

Result<std::vector<templates::EnvVar>> parse_env_flags(const std::vector<std::string>& words)
{
  std::vector<templates::EnvVar> vars;
  for (const auto& w : words) {
    const auto eq = w.find('=');
    const auto name = w.substr(0, eq);
    if (eq == std::string::npos || !proc::is_variable_name(name)) {
      return fail(ErrorCode::usage, fmt::format("--env '{}' is not KEY=VALUE with a variable name as KEY", w),
                  "e.g. --env WANDB_PROJECT=llm --env 'NOTE=two words' (secrets: rv env set NAME)");
    }
    vars.push_back({name, w.substr(eq + 1)});
  }
  return vars;
}

Result<strategy::PlanOptions> to_plan_options(const PlanFlags& f, const std::string& config_width,
                                              const std::string& time_scale)
{
  strategy::PlanOptions opts;
  int width = 0;
  if (f.max_strategies) {
    width = *f.max_strategies;
  } else {
    auto [p, ec] = std::from_chars(config_width.data(), config_width.data() + config_width.size(), width);
    if (ec != std::errc{} || p != config_width.data() + config_width.size()) {
      return fail(ErrorCode::config, fmt::format("max_strategies '{}' is not a whole number", config_width));
    }
  }
  if (width < 1 || width > 64) {
    return fail(ErrorCode::usage, fmt::format("the fan-out width must be 1-64, not {}", width));
  }
  opts.max_width = width;
  std::int64_t scale = 0;
  auto [sp, sec] = std::from_chars(time_scale.data(), time_scale.data() + time_scale.size(), scale);
  if (sec != std::errc{} || sp != time_scale.data() + time_scale.size() || scale < 1 || scale > 3600) {
    return fail(ErrorCode::config, fmt::format("time_scale '{}' is not a whole number from 1 to 3600", time_scale));
  }
  return strategy::compress_time(std::move(opts), scale);
}

} // namespace rv::cli
