#pragma once
// `rv run --in REQ CMD`: a command run inside the allocation request REQ holds (an `rv up --keep`,
// an `rv up`, a running `rv run`), as a step of its job (`srun --jobid --overlap`): the project
// synced and snapshotted as for any run, the job's environment (secrets, scratch, caches, venv),
// on every node with its rank (or one with --one), its output kept as the step's log
// (`rv logs REQ/step-N`). Steps are kept in the request's record (app/request/steps.hpp).

#include "app/env.hpp"
#include "app/request/steps.hpp"
#include "app/run/launch/smart_exec.hpp"
#include "core/model/plan.hpp"
#include "templates/render.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// `rv run --in`, every flag checked.
struct InOrder {
  std::string key;                    // REQ: any request key (id, prefix, job id, name)
  bool one = false;                   // --one: one task on one node, not one per node
  bool follow = false;                // -f: stream the output, exit as the command does
  std::optional<std::int64_t> time_s; // --time when given: the allocation must have that long left
  SmartRunFlags smart;                // --workdir, --no-sync, --output
  std::vector<templates::EnvVar> env; // --env KEY=VALUE
};

// Runs the command as a step of REQ's running job. With `follow`, streams its output and returns
// its exit status (Ctrl-C cancels the step alone: 130; with --json the output comes back in one
// document: ref, request, job_id, exit_code, stdout, stderr); else returns 0 once the step is
// started, detached from this connection, and prints how to follow and stop it (--json: the step).
Result<int> run_in(Env& env, const InOrder& order, const std::vector<std::string>& command);

// --time against what is left of the allocation: an error with a hint when `wanted_s` is longer
// than `limit_s - elapsed_s` (`limit_s` < 0: no limit). Pure.
Result<void> check_time_left(std::int64_t wanted_s, std::int64_t limit_s, std::int64_t elapsed_s,
                             const std::string& request_id, const std::string& job_id);

// The allocation's strategy `id` as the record's plan (strategy::to_json) keeps it: its shape,
// resources and walltime, enough to render a step. Pure; an error when the plan lacks it.
Result<model::Strategy> strategy_from_plan(const nlohmann::json& plan, const std::string& id);

// Refuses a request whose job runs its command in a container (`rv up|run --container`): a step
// rv run --in adds would run on the node, outside the image the allocation's shell runs in.
Result<void> check_not_container(const model::JobRequest& request, const std::string& request_id);

// The srun argv of step `name` in job `job_id`: with `every_node`, one labelled task per node of
// its `nodes`; else one task. `program` is the bash program each task runs. Pure.
std::vector<std::string> in_step_argv(const std::string& job_id, std::size_t nodes, bool every_node,
                                      const std::string& name, const std::string& program);

} // namespace rv::app
