#include "core/process/runner.hpp"

namespace rv::proc {

Result<std::vector<Outcome>> Runner::run_batch(const std::vector<Command>& cmds)
{
  std::vector<Outcome> outcomes;
  outcomes.reserve(cmds.size());
  for (const auto& cmd : cmds) {
    RV_TRY(outcome, run(cmd));
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

} // namespace rv::proc
