#pragma once
// The one seam every external command goes through: local, SSH, dry-run or fake.

#include "core/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::proc {

// Receives output as it arrives, for streaming (`rv exec`, `rv logs -f`).
using OutputSink = std::function<void(std::string_view)>;

// A command to run: an argv, never a shell string built by concatenation.
struct Command {
  std::vector<std::string> argv;
  std::optional<std::string> stdin_data;
  std::chrono::milliseconds timeout{std::chrono::seconds(60)}; // 0 = no limit
  OutputSink on_stdout;                                        // when set, stdout is streamed here (and still captured)
  OutputSink on_stderr;
  // Cleanup (scancel after Ctrl-C) must run even though an interrupt is pending.
  bool uninterruptible = false;
  // In a run_batch: may run at the same time as the batch's other concurrent commands (their
  // outputs still come back in order). A command without it waits for every earlier one.
  bool concurrent = false;
  // Safe to run twice (a read, a wait, an scancel): when the held connection under it ends while
  // it runs (the holder killed, its network dropped), the runner runs it again on a new one
  // instead of failing. A command that changes something once (sbatch, a write) leaves it false.
  bool repeatable = false;
};

// How a command ended. A non-zero exit is an Outcome, not an error.
struct Outcome {
  int exit_code = -1; // -1 when killed by a signal
  int signal = 0;     // the terminating signal, 0 if none
  bool timed_out = false;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{};

  bool ok() const { return exit_code == 0; }
  // The shell-style status: exit code, or 128+signal.
  int status() const { return signal != 0 ? 128 + signal : exit_code; }
};

// What a sent file keeps: permission bits and modification time (seconds since the epoch).
struct FileMeta {
  unsigned mode = 0644;
  std::int64_t mtime_s = 0;
};

// Runs commands somewhere. Fails only when a command could not be run at all.
class Runner {
public:
  virtual ~Runner() = default;

  // Runs `cmd` to completion (or its timeout, which sets `timed_out`).
  virtual Result<Outcome> run(const Command& cmd) = 0;

  // Runs every command of `cmds`, one Outcome each, in as few round trips as the runner can
  // (one for SSH). The default runs them one after another.
  virtual Result<std::vector<Outcome>> run_batch(const std::vector<Command>& cmds);

  // Names where commands run, for messages: "local" or "ssh user@host:port".
  virtual std::string where() const = 0;

  // The user commands run as on the cluster ("" when unknown): for sacctmgr and squeue -u.
  virtual std::string user() { return {}; }

  // Runs `argv` attached to this terminal (a PTY over SSH), for `rv up`'s shell; returns its
  // exit status. The default refuses: not every runner has a terminal to give.
  virtual Result<int> run_interactive(const std::vector<std::string>& argv);

  // File transfer (SFTP over SSH, plain copies locally); the parent directory must exist.
  // `put_file` writes a temporary file next to `remote_path` and renames it over the target, so a
  // hard link to the old file (a job's snapshot) keeps the old content. Returns bytes sent.
  // The defaults refuse: not every runner can move files.
  virtual Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path,
                                         const FileMeta& meta);
  // Replaces `remote_path` with a symlink to `target`.
  virtual Result<void> put_symlink(const std::string& target, const std::string& remote_path);
  // Copies `remote_path` to `local_path` (temporary file, then rename), keeping its mtime.
  virtual Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path);

  // Counts the round trips made so far (one per run, one per batch).
  virtual int round_trips() const { return m_round_trips; }

protected:
  int m_round_trips = 0;
};

} // namespace rv::proc
