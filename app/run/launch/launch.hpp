#pragma once
// `rv run` and `rv up` after planning: submit, race, then follow the winner (with a hardware retry
// around nodes whose GPUs fail) or attach to the allocation.

#include "app/env.hpp"
#include "app/run/launch/submit.hpp"
#include "app/run/plan/planning.hpp"

#include <functional>
#include <string>
#include <vector>

namespace rv::app {

// `rv up` after planning: fan out an allocation and attach a shell (or run `command`) with the
// job's environment (templates::render_step_environment), in `workdir` and with the smart
// execution `extras` (app/run/launch/smart_exec.hpp) as `rv run` has them; the allocation is released when
// the shell or command ends. With --json: the command's output comes back in one document
// (request, exit_code, stdout, stderr); without a command the allocation stays for `rv stop`.
Result<int> launch_up(Env& env, const PlanRun& plan, const std::string& command, const std::string& workdir = {},
                      const RunExtras& extras = {});

// What `rv run` without -f prints after the request table: the best submitted strategy's
// estimated start and SU, and the commands to follow, list and stop the request.
std::string submitted_summary(const RequestRecord& rec, const strategy::Plan& plan);

// `rv run` after planning: fan out a batch job running `command` (one word: a shell command line;
// several: an argv, quoted so it arrives exactly). With `follow`, race, stream the winner's output
// and return the job's exit code; a winner that fails the preflight or dies of a GPU fault soon
// after the start is re-fanned out without the node (app/run/launch/refanout.hpp).
Result<int> launch_run(Env& env, const PlanRun& plan, const std::vector<std::string>& command,
                       const std::string& workdir, bool follow, const RunExtras& extras = {});

// What `rv up --keep` prints once the allocation is won: where it is and the commands that use and
// release it.
std::string kept_summary(const RequestRecord& rec, const JobRecord& winner);

// `rv run`'s command as one shell command line: one word as it is; several, quoted as an argv.
std::string command_line_of(const std::vector<std::string>& command);

// Across clusters (docs/multi-cluster.md): a re-fan-out races every cluster again. Given the nodes
// this cluster must exclude from now on and the next round's extras (its re-fan-out history), it
// plans, launches and follows that round and returns its exit code.
using RetryElsewhere = std::function<Result<int>(const std::vector<std::string>& excluded, const RunExtras& next)>;

// launch_run -f after its submission: race `submitted`, follow the winner, re-fan-out around a
// failed node: on this cluster, or through `elsewhere` when set. Across clusters, the chosen
// cluster's member goes on here.
Result<int> follow_run(Env& env, const PlanRun& plan, Launched submitted, const std::string& line,
                       const std::string& workdir, const RunExtras& extras, const RetryElsewhere& elsewhere = {});

// launch_up in two steps: submit the allocation's holders, then race them and attach.
Result<Launched> submit_up(Env& env, const PlanRun& plan, const std::string& command, const std::string& workdir,
                           const RunExtras& extras);
Result<int> attach_up(Env& env, const PlanRun& plan, Launched launched, const std::string& command,
                      const std::string& workdir, const RunExtras& extras);

} // namespace rv::app
