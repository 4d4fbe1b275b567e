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

} // namespace rv::proc
