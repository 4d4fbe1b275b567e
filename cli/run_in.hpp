#pragma once
// `rv run --in REQUEST [--one] CMD...`: the flags and their check (app/node/in_alloc.hpp), kept out
// of cli/cmd_run.cpp.

#include "cli/context.hpp"
#include "cli/job_flags.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace rv::cli {

struct InFlags {
  std::string request; // --in REQUEST
  bool one = false;    // --one
};

// Adds --in and --one to `cmd` (rv run).
void add_in_flags(CLI::App* cmd, InFlags& f);

// The rv run options that still mean something with --in (long names): the allocation's own
// resources are fixed, so any other given option is refused.
const std::vector<std::string>& in_allowed_options();

// The first option given on `cmd` that --in does not take ("" when none), by its long name.
std::string option_refused_with_in(const CLI::App& cmd);

// rv run --in: every flag checked before any round trip, then app::run_in on the request's cluster.
Result<int> run_in_allocation(const InFlags& in, const JobFlags& job, bool follow, const CLI::App& cmd, Context& ctx);

} // namespace rv::cli
