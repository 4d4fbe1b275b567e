#pragma once
// One request raced across clusters after planning (docs/multi-cluster.md): each cluster with a
// strategy is prepared (sync) and submitted as a member request of one race group, its jobs gated;
// rv chooses the cluster whose job starts first (app/run/launch/cluster_race.hpp) and cancels the
// rest; the chosen member then goes on as on one cluster (follow, or attach for rv up). Without
// -f a background rv settles the race.

#include "app/run/launch/smart_exec.hpp"
#include "app/run/plan/across_plan.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace rv::app {

enum class AcrossMode {
  submit, // rv run: return once submitted; a background rv settles the race
  follow, // rv run -f: race, then follow the winner
  up,     // rv up: race, then attach (a shell, or `line`)
};

struct AcrossLaunch {
  AcrossMode mode = AcrossMode::submit;
  std::string line; // rv run: the command line; rv up: the user's command ("" = a shell)
  // Smart execution on one cluster (sync, snapshot): run for each cluster, in parallel.
  std::function<Result<SmartRun>(Env&)> prepare;
  // rv run -f: a re-fan-out round (the history so far, recorded in every member); and how the next
  // round runs, given the winning cluster's host and the nodes it must exclude (app/run/pipeline.cpp).
  nlohmann::json refanout;
  std::function<Result<int>(const std::string& host, const std::vector<std::string>& excluded, const RunExtras& next)>
      elsewhere;
};

Result<int> launch_across(Env& env, const AcrossPlan& plans, const AcrossLaunch& how);

} // namespace rv::app
