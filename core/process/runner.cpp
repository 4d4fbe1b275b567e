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

Result<int> Runner::run_interactive(const std::vector<std::string>&)
{
  return fail(ErrorCode::usage, "an interactive command needs a terminal, which " + where() + " cannot give");
}

} // namespace rv::proc
