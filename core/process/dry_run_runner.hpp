#pragma once
// A runner that records commands instead of running them (`--dry-run`, tests).

#include "core/process/runner.hpp"

#include <functional>

namespace rv::proc {

// Records every command; answers each with exit 0 and empty output, or with `respond`.
class DryRunRunner final : public Runner {
public:
  using Responder = std::function<Outcome(const Command&)>;
  explicit DryRunRunner(Responder respond = {}) : m_respond(std::move(respond)) {}

  Result<Outcome> run(const Command& cmd) override;
  // Records each command of the batch; counts one round trip for the whole batch.
  Result<std::vector<Outcome>> run_batch(const std::vector<Command>& cmds) override;
  std::string where() const override { return "dry-run"; }

  // The commands seen so far, in order.
  const std::vector<Command>& recorded() const { return m_recorded; }

private:
  Responder m_respond;
  std::vector<Command> m_recorded;
};

} // namespace rv::proc
