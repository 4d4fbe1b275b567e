#pragma once
// Node states as scontrol (`MIXED+DRAIN`) and sinfo (`drained*`, `mix-`) print them.

#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// A node state split into its base and flags, and whether rv may place jobs there.
struct NodeState {
  std::string base;               // idle, mixed, allocated, completing, down, future, unknown...
  std::vector<std::string> flags; // drain, fail, maint, reserved, not_responding, planned, cloud...
  bool usable = true;             // false for down/drain/fail/reserved/maint/inval/not_responding
};

// Parses either spelling; unknown words become flags so nothing is lost.
NodeState parse_node_state(std::string_view state);

} // namespace rv::slurm
