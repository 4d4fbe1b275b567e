#pragma once
// Runs commands on this machine with posix_spawn: the login-node case.

#include "core/process/runner.hpp"

namespace rv::proc {

// Runs argv directly (no shell), stdout and stderr apart, with a timeout that kills the
// child's whole process group. An interrupt (SIGINT/SIGTERM) kills the child too.
class LocalRunner final : public Runner {
public:
  Result<Outcome> run(const Command& cmd) override;
  // Runs the same framed script as SSH does, through /bin/sh: one process tree, one round trip.
  Result<std::vector<Outcome>> run_batch(const std::vector<Command>& cmds) override;
  std::string where() const override { return "local"; }
  std::string user() override;
  // Runs `argv` on this terminal (SSH: in a PTY, with the local terminal in raw mode).
  Result<int> run_interactive(const std::vector<std::string>& argv) override;
  // Plain copies on this machine (temporary file, then rename).
  Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path,
                                 const FileMeta& meta) override;
  Result<void> put_symlink(const std::string& target, const std::string& remote_path) override;
  Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path) override;
};

// Tells whether `program` is an executable on PATH.
bool on_path(const std::string& program);

} // namespace rv::proc
