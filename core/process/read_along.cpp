#include "core/process/read_along.hpp"

namespace rv::proc {

Result<Outcome> ReadAlong::run(const Command& cmd)
{
  if (m_sent) {
    return m_inner.run(cmd);
  }
  m_sent = true;
  RV_TRY(outs, m_inner.run_batch({cmd, m_also}));
  if (outs.size() != 2) {
    return fail(ErrorCode::generic, "a batch of two commands gave " + std::to_string(outs.size()) + " outcomes");
  }
  m_result = std::move(outs[1]);
  return std::move(outs[0]);
}

Result<std::vector<Outcome>> ReadAlong::run_batch(const std::vector<Command>& cmds)
{
  if (m_sent) {
    return m_inner.run_batch(cmds);
  }
  m_sent = true;
  auto all = cmds;
  all.push_back(m_also);
  RV_TRY(outs, m_inner.run_batch(all));
  if (outs.size() != all.size()) {
    return fail(ErrorCode::generic, "a batch gave fewer outcomes than commands");
  }
  m_result = std::move(outs.back());
  outs.pop_back();
  return outs;
}

} // namespace rv::proc
