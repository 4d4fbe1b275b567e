#pragma once
// A runner that records commands instead of running them, each answered by `respond` (or exit 0,
// no output); a batch counts one round trip. Unit tests only (it was core's DryRunRunner, which
// the product never used).

#include "core/process/runner.hpp"

#include <functional>
#include <vector>

namespace rv::test {

class RecordingRunner final : public proc::Runner {
public:
  using Responder = std::function<proc::Outcome(const proc::Command&)>;
  explicit RecordingRunner(Responder respond = {}) : m_respond(std::move(respond)) {}

  Result<proc::Outcome> run(const proc::Command& cmd) override
  {
    ++m_round_trips;
    m_recorded.push_back(cmd);
    if (m_respond) {
      return m_respond(cmd);
    }
    proc::Outcome o;
    o.exit_code = 0;
    return o;
  }
  Result<std::vector<proc::Outcome>> run_batch(const std::vector<proc::Command>& cmds) override
  {
    std::vector<proc::Outcome> outcomes;
    for (const auto& cmd : cmds) {
      RV_TRY(o, run(cmd));
      outcomes.push_back(std::move(o));
    }
    m_round_trips -= static_cast<int>(cmds.size()) - (cmds.empty() ? 0 : 1);
    return outcomes;
  }
  std::string where() const override { return "recorded"; }

  // The commands seen so far, in order.
  const std::vector<proc::Command>& recorded() const { return m_recorded; }

private:
  Responder m_respond;
  std::vector<proc::Command> m_recorded;
};

} // namespace rv::test
