#pragma once
// The steps rv started inside a request's allocation (`rv run --in REQ`), kept in the request's
// record under "steps" (docs/requests.md), named `REQ/step-N` by every command (rv logs, rv stop),
// and found in Slurm by their step name (`squeue --steps`).

#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "core/store/record_store.hpp"
#include "slurm/jobs.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

// One step, as the record keeps it.
struct StepRecord {
  int n = 0;              // step-N: rv's number in the request, 1, 2, ...
  std::string job_id;     // the allocation it runs in
  std::string name;       // the Slurm step's name: <request name>.step-N
  std::string command;    // the user's command line
  std::string workdir;    // where it runs (the snapshot when synced)
  std::string log_base;   // remote: LOG_BASE.out/.err/.status; on several nodes LOG_BASE.node<K>.*
  int nodes = 1;          // tasks, one per node
  std::string created_at; // UTC, ISO 8601
  std::string state;      // running, done, failed, cancelled, ended (no status left: its allocation ended)
  std::optional<int> exit_code;
};

nlohmann::json to_json(const StepRecord& s);
// The steps of a request record's JSON, by number; a malformed entry is skipped.
std::vector<StepRecord> steps_of(const nlohmann::json& record);

// `REQ/step-N` as the user wrote it.
struct StepRef {
  std::string request; // REQ: any key find_request takes
  int n = 0;
};
// nullopt when `key` names no step (no `/`); an error with a hint when it has a `/` but is not
// `REQ/step-N` with N a positive number.
Result<std::optional<StepRef>> parse_step_ref(std::string_view key);
std::string step_ref(const std::string& request_id, int n);

// The Slurm step name of step `n` of the request named `request_name`.
std::string step_name(const std::string& request_name, int n);

// Adds `step` to the record of request `id` under the store's lock, numbered one past the highest
// number the request has used (two `rv run --in` at once get two numbers); `step.name` and
// `step.log_base` come as prefixes (the request's name; `<logs>/<name>-<job id>`) and get
// `.step-N` appended. Returns it numbered.
Result<StepRecord> add_step(store::RecordStore& store, const std::string& id, StepRecord step);
// Records how step `n` of request `id` ended (a final state is never overwritten).
Result<void> end_step(store::RecordStore& store, const std::string& id, int n, const std::string& state,
                      std::optional<int> exit_code);
// Step `n` of request `id`, or an error naming the steps it has.
Result<StepRecord> find_step(const store::RecordStore& store, const std::string& id, int n);

// The remote log of step `s`: `.out` (or `.err`), of node `node` when it ran on several.
std::string step_log_path(const StepRecord& s, bool err, int node = 0);
// Where its exit status is kept (node 0's when it ran on several).
std::string step_status_path(const StepRecord& s);

// The exit status step `s` left beside its log (one `cat`); nullopt while it runs, or when it left
// none (cancelled, or its allocation ended under it).
Result<std::optional<int>> read_step_status(proc::Runner& runner, const StepRecord& s);

// The live Slurm step of `s` among `live` (squeue --steps of its job), matched by job and name;
// nullptr when it no longer runs.
const slurm::JobStep* live_step(const StepRecord& s, const std::vector<slurm::JobStep>& live);

// The running steps of job `job_id` (one squeue --steps).
Result<std::vector<slurm::JobStep>> job_steps(proc::Runner& runner, const std::string& job_id);

// Cancels step `s` alone (scancel J.S), not its allocation: false when it was not running.
Result<bool> cancel_step(proc::Runner& runner, const StepRecord& s);

} // namespace rv::app
