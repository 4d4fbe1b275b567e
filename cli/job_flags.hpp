#pragma once
// The flags `rv run` and `rv up` share (the plan's, --env, --notify, --no-preflight,
// --idle-timeout, --workdir, --no-sync), and their parse into an app::JobOrder, before any round
// trip.

#include "app/run/pipeline.hpp"
#include "cli/context.hpp"
#include "cli/plan_options.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rv::cli {

struct JobFlags {
  PlanFlags plan;
  app::SmartRunFlags smart;
  std::vector<std::string> env; // --env KEY=VALUE
  bool notify = false;
  bool no_preflight = false;
  std::string idle_timeout;                        // --idle-timeout DURATION
  std::optional<std::vector<std::string>> secrets; // task file [env] secrets, --secret: only these
  std::string container;                           // --container IMAGE (docs/containers.md)
  std::vector<std::string> container_mounts;       // --container-mount SRC:DST[:ro]
};

// Adds the job flags above to `cmd` (the plan's: add_plan_flags, first).
void add_job_flags(CLI::App* cmd, JobFlags& f);

// Every flag checked and turned into what the pipeline takes (the request, the plan's options,
// --env, --idle-timeout); --no-cache goes into the config's flag layer so the settings carry it.
Result<app::JobOrder> job_order(const JobFlags& f, Context& ctx);

} // namespace rv::cli
