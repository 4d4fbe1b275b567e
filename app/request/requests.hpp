#pragma once
// The local request record: what rv submitted for one `rv run`/`rv up`, written before the first
// sbatch and updated the moment each job id (and the winner) is known. Schema: docs/requests.md.

#include "core/model/plan.hpp"
#include "core/result.hpp"
#include "core/store/record_store.hpp"
#include "slurm/job_state.hpp"
#include "slurm/race.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

// Where a request stands: submitting -> submitted -> won -> done; failed or cancelled from any
// state. done, failed and cancelled are final: never overwritten. Stored as its name.
enum class RequestState { submitting, submitted, won, done, failed, cancelled };

std::string_view to_string(RequestState s);
// The state named `s` (as to_string writes it), or nullopt.
std::optional<RequestState> parse_request_state(std::string_view s);

// One sibling job of a request.
struct JobRecord {
  std::string strategy_id;
  std::string label; // the strategy's one-line description
  std::string partition;
  std::string gpu_type;
  int nodes = 1;
  std::string job_id;                               // "" until sbatch answered (or when it refused)
  std::string error;                                // sbatch's refusal
  slurm::JobState state = slurm::JobState::unknown; // last known Slurm state; unknown: none yet (or refused)
  std::string reason;                               // last known pending reason
  std::string node_list;                            // where it ran
  std::vector<std::string> earlier_segments;        // job ids of the checkpoint segments before job_id
  std::string start_estimate;                       // pending: Slurm's expected start (cluster-local), "" if none
  std::int64_t elapsed_s = 0;                       // run time when last seen
  // Predictions that learn (docs/requests.md, "Predictions"): what the plan predicted and what
  // happened, epoch seconds of rv's clock (0 = not known / did not happen).
  std::optional<std::int64_t> predicted_wait_s; // the plan's est_wait_s; nullopt = unknown
  std::string predicted_by;                     // the estimator that made it (Strategy::wait_model); "" = not recorded
  std::int64_t submitted_at = 0;                // sbatch answered with the job id
  std::int64_t started_at = 0;                  // it started (rv's clock when seen, minus its run time)
  std::int64_t cancelled_pending_at = 0;        // cancelled (by rv or the user) while still pending
  // Slurm's own estimate, to compare with rv's (`rv stats`): the first start estimate a poll saw
  // while the job was pending (cluster-local time), and when it saw it (rv's clock).
  std::string slurm_estimate;
  std::int64_t slurm_estimate_at = 0;
};

// A job's state as its record keeps it (the `state` field of docs/requests.md): Slurm's name
// (`PENDING`, `CANCELLED`), `REFUSED` when sbatch refused it, "" before sbatch answered.
std::string state_name(const JobRecord& job);

// Records that `job` was cancelled at `now`: its state, and when it was still pending (never
// started), the moment, for the prediction history.
void mark_cancelled(JobRecord& job, std::int64_t now);

// Copies what a poll saw of a job into its record: state, reason, nodes (kept when the view has
// none), start estimate and run time.
void apply_view(JobRecord& job, const slurm::JobView& view);

// apply_view for a poll outside a race (`rv ps`, the background rv): a job it finds cancelled that
// never started was cancelled while pending, recorded as seen at `now` (mark_cancelled).
void apply_polled(JobRecord& job, const slurm::JobView& view, std::int64_t now);

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
  std::string log_dir; // remote: <log_dir>/<name>-<jobid>.out|.err
  RequestState state = RequestState::submitting;
  std::string winner; // strategy id of the winner, "" until known
  std::vector<JobRecord> jobs;
  std::vector<std::string> secrets; // names of the `rv env` secrets the jobs get (never values)
  std::string secrets_file;         // remote file holding them; "" when none, or once removed
  std::string pruned_at;            // when `rv ps` removed its remote directory and logs (UTC ISO); "" = not
  nlohmann::json plan;              // the plan's JSON, as --dry-run --json shows it
  nlohmann::json options;           // the request as asked (request_options_json); null in older records
  // Smart execution (docs/sync.md): project, git branch/commit/dirty, workspace, snapshot,
  // venv, outputs; null when the command was not synced.
  nlohmann::json sync;
  // Re-fan-out (app/run/launch/refanout.hpp, docs/preflight.md): {"history": [{request, job_id, node, kind,
  // reason}], "excluded": [...], "next_request": id or ""}; null when no node failed the request.
  nlohmann::json refanout;
  std::optional<std::int64_t> utc_offset_s; // the cluster's offset from UTC at submission (reads slurm_estimate)
  // The login node as the user named it (`--host`, an ~/.ssh/config alias): how a later command
  // reaches this request's cluster again; "" = the configured one (docs/multi-cluster.md).
  std::string destination;
  // Slurm's ClusterName at submission: one cluster reached through several login nodes or aliases
  // is one cluster in `rv ps` and `rv stats` (ux-review-3 N9); "" in older records.
  std::string cluster;
  // Across clusters (docs/multi-cluster.md): {"group": id, "members": [{"id", "host"}...], "chosen":
  // member id or ""}, the same in every member's record; null for a request on one cluster.
  nlohmann::json race;
  // rv run --after (app/run/after.hpp): {"request": id, "kind": "ok"|"any", "dependency": Slurm's
  // --dependency}; null for a request that waits for none.
  nlohmann::json after;
  // A study (docs/studies.md): its tasks, as app/run/plan/study.hpp writes them; every job is a worker
  // (none races another: none is a loser). Null for a request of one command.
  nlohmann::json study;

  // Not stored: the record as this process last read or wrote it. save() applies only what
  // changed since (three-way merge under the store's lock), so a concurrent rv's changes to
  // other fields survive. Null for a record not yet in the store.
  nlohmann::json base;

  // Where it ran, as people name it: the ClusterName, else the login alias, else the login node.
  std::string cluster_label() const;

  // The winner's job, or nullptr.
  const JobRecord* winner_job() const;
  // The job that ran the command though no winner is recorded: one that ended other than
  // cancelled after it started (a job that failed within a poll interval is never seen running;
  // a sibling that loses at the gate cancels itself), the latest started; nullptr when none.
  const JobRecord* job_that_ran() const;
  // Job ids that were submitted.
  std::vector<std::string> job_ids() const;
};

nlohmann::json to_json(const RequestRecord& r);

// The request's options as a record stores them (`options`, docs/requests.md), so that `rv why`
// can re-plan the same request; and back (nullopt when `j` holds none, as in older records).
nlohmann::json request_options_json(const model::JobRequest& request);
std::optional<model::JobRequest> request_options_from_json(const nlohmann::json& j);
Result<RequestRecord> request_from_json(const nlohmann::json& j);

// Newest first: by created_at, then (created_at has whole seconds) by the highest Slurm job id,
// which grows with submission. What "the latest request" means when no KEY is given.
void sort_newest_first(std::vector<RequestRecord>& requests);

// Records that checkpoint segment `prev` of request `r` resubmitted itself as job `next`: the
// job record moves on to `next` (in `r` and in the store) and keeps `prev` in earlier_segments.
void record_next_segment(store::RecordStore& store, RequestRecord& r, const std::string& prev, const std::string& next);

// The remote log file of `job` in `r` (`.out`, or `.err` when `err`).
std::string log_path(const RequestRecord& r, const JobRecord& job, bool err);

// The state a request ends in once its winner's job ended in `job_state`: done when it
// COMPLETED, cancelled when it was CANCELLED, failed otherwise (FAILED, TIMEOUT,
// OUT_OF_MEMORY, NODE_FAIL...). The winner's own state stays in its job record.
RequestState ended_state(slurm::JobState job_state);

// Whether `state` is one a request ends in (done, failed, cancelled): never overwritten.
bool is_final_state(RequestState state);

// Writes the record back: only what changed since `r.base` is applied to the stored record
// as it is now (a concurrent `rv stop` or `rv ps` is not undone), and `r` becomes the merged
// record. Logs (does not fail) when the local store cannot be written.
void save(store::RecordStore& store, RequestRecord& r);

// The log of request `id`'s background rv (`rv _settle`, a race across clusters), beside its
// record in the local store; removed with the request's cluster state (prune_remote_state).
std::filesystem::path settle_log_path(const store::RecordStore& store, const std::string& id);
// The lock a study's tender holds (`rv run -f` following it, or the background `rv _settle`): one
// tender at a time, and `rv ps` starts one when nobody holds it (docs/studies.md).
std::filesystem::path tending_lock_path(const store::RecordStore& store, const std::string& id);

} // namespace rv::app
