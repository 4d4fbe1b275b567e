#pragma once
// The walk of `rv run` and `rv up`, once: plan (discovery, probes, ranking), then --dry-run shows
// it; else smart execution prepares the command (sync, snapshot, deps), and launch submits the
// fan-out, races it and (rv up, rv run -f) follows the winner. The CLI parses the flags into a
// JobOrder before any round trip (cli/cmd_run.cpp, cli/cmd_up.cpp).

#include "app/env.hpp"
#include "app/run/launch/smart_exec.hpp"
#include "app/run/plan/study.hpp"
#include "core/model/plan.hpp"
#include "strategy/options.hpp"
#include "templates/render.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// What `rv run` and `rv up` share, every flag already checked.
struct JobOrder {
  model::JobRequest request;
  strategy::PlanOptions plan_options;
  bool dry_run = false;
  SmartRunFlags smart;
  std::vector<templates::EnvVar> env; // --env KEY=VALUE
  bool notify = false;
  bool preflight = true;
  std::int64_t idle_timeout_s = 0;                 // --idle-timeout; 0 = none
  std::optional<std::vector<std::string>> secrets; // a task file's [env] secrets: only these
  // rv run --after (app/run/after.hpp): Slurm's --dependency for every strategy ("" = none) and
  // the record's `after` (null = none).
  std::string dependency;
  nlohmann::json after;
  bool keep = false;       // rv up --keep: hold the allocation without a shell
  study::StudyFlags study; // --array, --sweep, --sweep-file (docs/studies.md); none = one command
  // A study's per-task --time in seconds as given (request.time_s is it in Slurm's whole minutes,
  // the workers' walltime); 0 = request.time_s.
  std::int64_t task_time_s = 0;
  std::int64_t study_task_time_s() const { return task_time_s > 0 ? task_time_s : request.time_s; }
};

// `rv run CMD...` (-f: `follow`): exits as the job does with -f, else 0 once submitted.
Result<int> run_command(Env& env, const JobOrder& order, const std::vector<std::string>& command, bool follow);

// `rv up` (a shell on the winning node) or `rv up --run CMDLINE`. An allocation is never split
// into checkpoint segments: the order's request must not ask for them.
Result<int> bring_up(Env& env, const JobOrder& order, const std::string& command_line);

} // namespace rv::app
