#include "core/process/batch.hpp"

#include <fmt/format.h>

#include <atomic>
#include <stdexcept>
#include <utility>

namespace rv::proc {
namespace {

std::uint64_t next_batch_id()
{
  static std::atomic<std::uint64_t> last{0};
  return ++last;
}

} // namespace

Batch::Batch(std::string what) : m_id(next_batch_id()), m_what(std::move(what)) {}

Handle Batch::add(Command cmd)
{
  m_cmds.push_back(std::move(cmd));
  return {m_id, m_cmds.size() - 1};
}

HandleRange Batch::add(std::vector<Command> cmds)
{
  HandleRange range{m_id, m_cmds.size(), cmds.size()};
  for (auto& c : cmds) {
    m_cmds.push_back(std::move(c));
  }
  return range;
}

Result<Answers> Batch::run(Runner& runner) const
{
  RV_TRY(outcomes, runner.run_batch(m_cmds));
  if (outcomes.size() != m_cmds.size()) {
    return fail(ErrorCode::parse, fmt::format("{}: {} answers to {} commands", m_what, outcomes.size(), m_cmds.size()),
                "run with -v to see what came back");
  }
  return Answers(m_id, m_what, std::move(outcomes));
}

Answers::Answers(std::uint64_t batch, std::string what, std::vector<Outcome> outcomes)
    : m_batch(batch), m_what(std::move(what)), m_outcomes(std::move(outcomes))
{}

void Answers::check(std::uint64_t batch, std::size_t end) const
{
  if (batch != m_batch || end > m_outcomes.size()) {
    throw std::logic_error(fmt::format("{}: a handle of another batch", m_what));
  }
}

const Outcome& Answers::operator[](Handle h) const
{
  check(h.batch, h.at + 1);
  return m_outcomes[h.at];
}

std::span<const Outcome> Answers::operator[](HandleRange h) const
{
  check(h.batch, h.first + h.count);
  return std::span<const Outcome>(m_outcomes).subspan(h.first, h.count);
}

} // namespace rv::proc
