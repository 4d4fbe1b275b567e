#include "core/process/dry_run_runner.hpp"

namespace rv::proc {

Result<Outcome> DryRunRunner::run(const Command& cmd)
{
  ++m_round_trips;
  m_recorded.push_back(cmd);
  if (m_respond) {
    return m_respond(cmd);
  }
  Outcome o;
  o.exit_code = 0;
  return o;
}

Result<std::vector<Outcome>> DryRunRunner::run_batch(const std::vector<Command>& cmds)
{
  std::vector<Outcome> outcomes;
  for (const auto& cmd : cmds) {
    RV_TRY(o, run(cmd));
    outcomes.push_back(std::move(o));
  }
  m_round_trips -= static_cast<int>(cmds.size()) - (cmds.empty() ? 0 : 1);
  return outcomes;
}

} // namespace rv::proc
