#pragma once
// The local request record: what rv submitted for one `rv run`/`rv up`, written before the first
// sbatch and updated the moment each job id (and the winner) is known. Schema: docs/requests.md.

#include "core/result.hpp"
#include "core/store/record_store.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rv::cli {

// One sibling job of a request.
struct JobRecord {
  std::string strategy_id;
  std::string label;     // the strategy's one-line description
  std::string partition;
  std::string gpu_type;
  int nodes = 1;
  std::string job_id;    // "" until sbatch answered (or when it refused)
  std::string error;     // sbatch's refusal
  std::string state;     // last known Slurm state (PENDING, RUNNING, CANCELLED...)
  std::string reason;    // last known pending reason
  std::string node_list; // where it ran
};

// One request.
struct RequestRecord {
  std::string id;         // 8 hex digits
  std::string created_at; // UTC, ISO 8601
  std::string host;       // where the jobs were submitted (runner.where())
  std::string name;       // Slurm job name shared by the siblings
  std::string kind;       // "run" or "up"
  std::string command;    // the user's command line
  std::string workdir;    // remote directory the command runs in
  std::string remote_root;
  std::string log_dir;    // remote: <log_dir>/<name>-<jobid>.out|.err
  // submitting -> submitted -> won | failed | cancelled; "done" once the winner ended.
  std::string state = "submitting";
  std::string winner;     // strategy id of the winner, "" until known
  std::vector<JobRecord> jobs;
  nlohmann::json plan;    // the plan's JSON, as --dry-run --json shows it
  // Smart execution (docs/sync.md): project, git branch/commit/dirty, workspace, snapshot,
  // venv, outputs; null when the command was not synced.
  nlohmann::json sync;

  // The winner's job, or nullptr.
  const JobRecord* winner_job() const;
  // Job ids that were submitted.
  std::vector<std::string> job_ids() const;
};

nlohmann::json to_json(const RequestRecord& r);
Result<RequestRecord> request_from_json(const nlohmann::json& j);

// The local store of request records ($XDG_STATE_HOME/rv/requests, or RV_STATE_DIR).
store::RecordStore request_store();

// Finds a request by id prefix, or by job id, or by job name; an error lists the ambiguity.
Result<RequestRecord> find_request(const store::RecordStore& store, const std::string& key);

// The remote log file of `job` in `r` (`.out`, or `.err` when `err`).
std::string log_path(const RequestRecord& r, const JobRecord& job, bool err);

} // namespace rv::cli
