#pragma once
// Submitting a plan: the request record first, then every strategy rendered and submitted in one
// round trip; a submission cut off part-way leaves nothing untracked (app/request/reap.hpp).

#include "app/env.hpp"
#include "app/request/owned_request.hpp"
#include "app/request/remote_roots.hpp"
#include "app/request/requests.hpp"
#include "app/run/launch/notify.hpp"
#include "app/run/launch/run_extras.hpp"
#include "app/run/plan/planning.hpp"
#include "app/run/plan/study.hpp"
#include "templates/render.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rv::app {

// The program the command line runs first, checked on the login node before anything is queued
// (Preparation::program, UX review 3 N7), when the login node can tell whether the job will find
// it: a plain name (not a path, an expansion, `[[` or a quoted oddity), no function or subshell in
// the line, and no set-up lines of the job's (a dependency install in the job) that could bring it.
// "" = not checked.
std::string program_to_check(const std::string& line, const RunExtras& extras);

// A submitted request: its record (job ids known), owned by this process until it is finished or
// released (app/request/owned_request.hpp), and where its files are on the cluster.
struct Launched : OwnedRequest {
  Launched(OwnedRequest&& owner, RemotePaths p) : OwnedRequest(std::move(owner)), paths(std::move(p)) {}
  RemotePaths paths;
};

// Asks the login node for $HOME (one round trip) and creates rv's directories there. With
// `secrets` (an env_script), also writes them to <root>/requests/<id>/env, 0600, through stdin:
// before any sbatch, so no job can start without them, and never in argv. A `workdir` (where the
// job will cd, "" = none) that is not a directory there is a usage error, found in the same round
// trip before anything is written.
Result<RemotePaths> prepare_remote(proc::Runner& runner, const Settings& settings, const std::string& request_id,
                                   const std::string& secrets, const std::string& workdir = {});

// What the job scripts of request `rec` (its files under `paths`) are rendered from: `command_line`
// run in `workdir` with the smart-execution `extras`; the strategy's rank is left to the caller.
// The batch scripts and `rv up`'s step (templates::render_step_environment) share it.
templates::RenderOptions render_options(const RequestRecord& rec, const RemotePaths& paths,
                                        const std::string& command_line, const std::string& workdir,
                                        const RunExtras& extras);

// The secrets the jobs get (env_script lines, with --notify's derived key), and their names; rv's
// own webhook secret stays here.
struct JobSecrets {
  std::vector<std::string> names;
  std::string text;
  NotifyPlan notify;
};
// `only`: a task file's [env] secrets (just these; nullopt = every stored secret).
Result<JobSecrets> job_secrets(Env& env, const std::string& request_id, bool notify,
                               const std::optional<std::vector<std::string>>& only = std::nullopt);

// Records the request, renders and submits every strategy, records the job ids and prints them
// (unless --json). With the roots discovery resolved (planned.roots), rv's directories, the secrets
// and every sbatch are ONE round trip (each sbatch guarded by prepare_command's marker); without,
// prepare_remote first, then the sbatch batch. Fails, with nothing left running, when nothing was submitted.
// `kind` is "run" or "up"; the record shows `shown_command` when given (rv up: what the user asked
// for, not the sleep that holds the nodes), else `command_line`.
Result<Launched> submit_request(Env& env, const PlanRun& planned, const std::string& command_line,
                                const std::string& workdir, const char* kind, const RunExtras& extras = {},
                                const std::string& shown_command = {});

// Appends the job record of strategy `s` to `rec`, without a job id yet.
void add_job_record(RequestRecord& rec, const model::Strategy& s);

} // namespace rv::app
