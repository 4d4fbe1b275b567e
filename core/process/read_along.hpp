#pragma once
// A Runner that carries one more command on the first command it runs, so that a read rides on a
// round trip the caller makes anyway (`rv ps` reads the watchdog's samples with its squeue).

#include "core/process/runner.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rv::proc {

// A Runner that carries one more command on the first command it runs (one round trip instead of
// two: `rv ps` reads the samples with its squeue). Everything else goes to `inner` unchanged.
class ReadAlong final : public Runner {
public:
  ReadAlong(Runner& inner, Command also) : m_inner(inner), m_also(std::move(also)) {}
  Result<Outcome> run(const Command& cmd) override;
  Result<std::vector<Outcome>> run_batch(const std::vector<Command>& cmds) override;
  std::string where() const override { return m_inner.where(); }
  std::string user() override { return m_inner.user(); }
  Result<int> run_interactive(const std::vector<std::string>& argv) override { return m_inner.run_interactive(argv); }
  int round_trips() const override { return m_inner.round_trips(); }
  Result<std::uint64_t> put_file(const std::string& local, const std::string& remote, const FileMeta& meta) override
  {
    return m_inner.put_file(local, remote, meta);
  }
  Result<void> put_symlink(const std::string& target, const std::string& remote) override
  {
    return m_inner.put_symlink(target, remote);
  }
  Result<std::uint64_t> get_file(const std::string& remote, const std::string& local) override
  {
    return m_inner.get_file(remote, local);
  }
  // The carried command's outcome; nullopt until it ran (or when its round trip failed).
  const std::optional<Outcome>& also() const { return m_result; }

private:
  Runner& m_inner;
  Command m_also;
  std::optional<Outcome> m_result;
  bool m_sent = false;
};

} // namespace rv::proc
