#pragma once
// `rv run --after REQ[:ok|any]` on the command line (app/run/after.hpp): the flag, and what it
// makes of the order before the pipeline runs: a Slurm dependency on the same cluster, or, when
// the other request runs on another cluster, a background rv that waits for its end and then
// goes on with the submission (this process answers at once).

#include "app/run/pipeline.hpp"
#include "cli/context.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace rv::cli {

// Adds --after REQ[:ok|any] to `cmd`.
void add_after_flag(CLI::App* cmd, std::string& after);

// With `after` given: resolves it (one squeue on the other request's cluster) and fills the
// order's dependency and record. When rv must wait for another cluster, says so and waits: with
// `follow` (rv run -f) here, else in a detached child while this process ends with status 0 (it
// never returns then); --dry-run only says so. Returns with the order ready to submit.
Result<void> apply_after(const std::string& after, app::JobOrder& order, RealEnv& real, Context& ctx, bool follow);

} // namespace rv::cli
