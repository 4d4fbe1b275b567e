#pragma once
// A scripted runner for unit tests: each expected argv gets a canned reply; an unexpected
// command fails the test.

#include "core/process/runner.hpp"

#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace rv::test {

class FakeRunner final : public proc::Runner {
public:
  using Matcher = std::function<bool(const std::vector<std::string>&)>;

  // Expects a command whose argv satisfies `match`; replies with `reply`.
  void expect(Matcher match, proc::Outcome reply) { m_script.push_back({std::move(match), std::move(reply)}); }

  // Expects a command whose argv starts with `prefix`.
  void expect_prefix(std::vector<std::string> prefix, proc::Outcome reply)
  {
    expect(
        [prefix](const std::vector<std::string>& argv) {
          return argv.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), argv.begin());
        },
        std::move(reply));
  }

  Result<proc::Outcome> run(const proc::Command& cmd) override
  {
    ++m_round_trips;
    m_seen.push_back(cmd.argv);
    if (m_script.empty() || !m_script.front().match(cmd.argv)) {
      m_unexpected.push_back(cmd.argv);
      return fail(ErrorCode::generic, "fake runner: unexpected command " + (cmd.argv.empty() ? "" : cmd.argv[0]));
    }
    auto reply = std::move(m_script.front().reply);
    m_script.pop_front();
    return reply;
  }

  std::string where() const override { return "fake"; }

  const std::vector<std::vector<std::string>>& seen() const { return m_seen; }
  const std::vector<std::vector<std::string>>& unexpected() const { return m_unexpected; }
  bool all_consumed() const { return m_script.empty(); }

  // Builds an Outcome with `exit_code`, `out` and `err`.
  static proc::Outcome reply(int exit_code, std::string out = {}, std::string err = {})
  {
    proc::Outcome o;
    o.exit_code = exit_code;
    o.out = std::move(out);
    o.err = std::move(err);
    return o;
  }

private:
  struct Step {
    Matcher match;
    proc::Outcome reply;
  };
  std::deque<Step> m_script;
  std::vector<std::vector<std::string>> m_seen;
  std::vector<std::vector<std::string>> m_unexpected;
};

} // namespace rv::test
