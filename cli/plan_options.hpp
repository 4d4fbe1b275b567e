#pragma once
// The plan flags `rv up`, `rv run` and `rv cost` share, and their conversion to a JobRequest.

#include "core/config.hpp"
#include "core/model/plan.hpp"
#include "core/result.hpp"
#include "strategy/options.hpp"
#include "templates/render.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rv::cli {

struct PlanFlags {
  int gpus = 1;
  std::string type;
  std::string time = "1h";
  std::string mem;
  std::optional<int> cpus;
  std::optional<int> vram;
  bool single_node = false;
  std::optional<int> nodes; // --nodes: exactly this many
  bool mig = false;
  bool time_min = false;
  bool checkpoint = false;    // --checkpoint
  bool no_checkpoint = false; // --no-checkpoint: overrides the config default
  std::string qos;
  std::string exclude;
  std::string name;
  std::optional<int> max_strategies;
  bool dry_run = false;
  bool no_cache = false; // --no-cache: read every cluster fact now (config discovery_cache 0)
};

// Adds the plan flags to `cmd`; `with_dry_run` adds --dry-run too.
void add_plan_flags(CLI::App* cmd, PlanFlags& flags, bool with_dry_run);

// Validates the flags into a request (clear errors for 0 GPUs, `0h`, `2abc`, negatives, and
// more GPUs or CPUs than model::max_request_gpus and model::max_node_cpus).
// What the config gives a request when its flags do not: the account (-A), the QOS (--qos) and
// whether the program checkpoints (`checkpoint: true`).
struct RequestDefaults {
  std::string account;
  std::string qos;
  bool checkpoint = false;
};

// The request defaults of the (typed, already checked) config.
RequestDefaults request_defaults(const Config& config);

// Checkpoint strategies are opt-in: --checkpoint, or the config's `checkpoint: true` unless
// --no-checkpoint. --qos wins over the config's `qos`.
Result<model::JobRequest> to_request(const PlanFlags& flags, const RequestDefaults& defaults = {});
// --time in seconds as given: the request's time_s rounds it up to Slurm's whole minutes, a study's
// task keeps the seconds (its workers claim the next task while that much is left; docs/studies.md).
Result<std::int64_t> time_asked_s(const PlanFlags& flags);

// `--env KEY=VALUE` words as the job's variables: KEY a shell variable name, VALUE any bytes after
// the first '='; a usage error names the bad word.
Result<std::vector<templates::EnvVar>> parse_env_flags(const std::vector<std::string>& words);

// The planner knobs, with the fan-out width from --max-strategies or the config, and the time
// knobs compressed by the config's time_scale (benchmarks on a compressed-time cluster).
Result<strategy::PlanOptions> to_plan_options(const PlanFlags& flags, const std::string& config_width,
                                              const std::string& time_scale = "1");

} // namespace rv::cli
