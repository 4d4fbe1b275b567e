#pragma once
// What `rv run` and `rv up` add to a request beyond its plan: what smart execution prepared
// (app/run/launch/smart_exec.hpp), the flags the pipeline passes on (app/run/pipeline.hpp) and,
// across clusters, the race. Filled before submission, read when the job scripts are rendered
// (app/run/launch/submit.hpp). Plain data, in a header of its own so that whoever fills it does not
// include the submission.

#include "app/run/plan/study.hpp"
#include "templates/render.hpp"
#include "templates/watchdog.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// A job's snapshot that the submission makes (issue #38 item 7): the first command of its batch,
// before the preparation that lets an sbatch run, so that a failed snapshot stops the batch before
// any sbatch (sync::snapshot_command: <snapshots>/<name>, a hard-link copy of the workspace).
struct SnapshotToMake {
  std::string workspace;
  std::string snapshots;
  std::string name;
};

// What smart execution adds to `rv run` (app/run/launch/smart_exec.hpp), plus the job's --env variables;
// all empty when nothing was synced and no --env was given.
struct RunExtras {
  std::string request_id; // made before submission: the snapshot is named after it
  // The snapshot the first submission makes at the head of its batch; nullopt = made already (or
  // no sync). A later submission of the same request's round (a retry) never makes it again.
  std::optional<SnapshotToMake> snapshot;
  std::string project_key; // keys RV_CHECKPOINT_DIR by project (snapshot paths change per job)
  std::string setup;       // shell lines the job runs before activating the venv
  std::string venv;        // the project's venv on the cluster
  std::string task_setup;  // --setup / a task file's `setup`, once per content (sync/deps.hpp)
  // A task file's [env] secrets (--secret): the job gets only these, and each must be set;
  // nullopt = every secret `rv env` holds.
  std::optional<std::vector<std::string>> secrets;
  std::string dependency;              // rv run --after: #SBATCH --dependency (app/run/after.hpp); "" = none
  nlohmann::json after;                // recorded as "after"; null = none
  std::vector<std::string> outputs;    // --output paths, relative to the job's directory
  std::vector<templates::EnvVar> env;  // --env KEY=VALUE: exported last, byte for byte
  bool notify = false;                 // --notify: Slurm mail and/or the webhook (app/run/launch/notify.hpp)
  nlohmann::json sync;                 // recorded in the request as "sync" (docs/requests.md)
  nlohmann::json refanout;             // re-fan-out history, recorded as "refanout" (app/run/launch/refanout.hpp)
  bool preflight = true;               // the in-job GPU preflight (--no-preflight turns it off)
  templates::WatchdogOptions watchdog; // GPU samples and --idle-timeout (docs/gpu.md)
  // Across clusters (docs/multi-cluster.md): the gate's wait (> 0: the claimer waits for rv's
  // choice) and the race group recorded as "race"; 0 and null on one cluster.
  std::int64_t gate_wait_s = 0;
  nlohmann::json race;
  // rv follows or attaches to the job (rv run -f, rv up): stdout is the job's alone, so the
  // submitted strategies' table goes to stderr (UX review 3, N3); without it the table is the
  // command's answer, on stdout.
  bool followed = false;
  // `rv up --keep`: return once the allocation is won and leave it held (until its time ends or
  // `rv stop`), for `rv run --in` commands.
  bool keep = false;
  // A study (docs/studies.md): every strategy of the plan is a worker rendered with the tasks;
  // null for a request of one command.
  std::shared_ptr<const study::Study> study;
};

} // namespace rv::app
