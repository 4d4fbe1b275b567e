#pragma once
// A typed batch of commands for one round trip: each command added returns a handle, and its
// answer (exit status, stdout, stderr) is read back through that handle, never by position. The
// batch checks once that every command was answered, so its users keep no slot numbers and no
// size checks of their own.

#include "core/process/runner.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rv::proc {

// One command of a batch.
struct Handle {
  std::uint64_t batch = 0;
  std::size_t at = 0;
};

// Commands added together (one scontrol per job, the discovery commands); possibly none.
struct HandleRange {
  std::uint64_t batch = 0;
  std::size_t first = 0;
  std::size_t count = 0;
};

// The answers of one run of a Batch, read through that batch's handles.
class Answers {
public:
  // The answer of `h`. A handle of another batch is a bug in rv, not an answer: std::logic_error
  // (main reports it as an internal error), never another command's output.
  const Outcome& operator[](Handle h) const;
  std::span<const Outcome> operator[](HandleRange h) const;

private:
  friend class Batch;
  Answers(std::uint64_t batch, std::string what, std::vector<Outcome> outcomes);
  void check(std::uint64_t batch, std::size_t end) const;

  std::uint64_t m_batch;
  std::string m_what;
  std::vector<Outcome> m_outcomes;
};

class Batch {
public:
  // `what` names the batch in errors ("rv why", "discovery").
  explicit Batch(std::string what);

  Handle add(Command cmd);
  HandleRange add(std::vector<Command> cmds);

  std::size_t size() const { return m_cmds.size(); }
  const std::vector<Command>& commands() const { return m_cmds; }

  // Runs every command in one Runner::run_batch (one round trip over SSH; none when empty). Fails
  // when the runner could not run them, or answered another number of commands than it was given.
  Result<Answers> run(Runner& runner) const;

private:
  std::uint64_t m_id;
  std::string m_what;
  std::vector<Command> m_cmds;
};

} // namespace rv::proc
