#pragma once
// The remote shell snippets rv needs everywhere, written once: where a path rv is given lands on
// the cluster, reading a file (whole, from a byte offset, or its last lines), writing a private
// file, removing files. Each is a Command for any Runner (so it can join a run_batch round trip),
// plus a helper that runs it. Domain-specific programs (snapshots, manifests, the race claim)
// live with their domain; they take their paths from here.

#include "core/clock.hpp"
#include "core/process/runner.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rv::proc::remote {

// The one rule for a remote path: `~` and `~/x` are below the login node's $HOME, `/x` stays,
// a relative `x` is below $HOME too (where an SSH session starts); `~user` is refused. As a POSIX
// sh function `rv_abs PATH` that prints the absolute path, for scripts that do more in the same
// round trip.
std::string_view abs_path_function();

// Resolves `paths` in one round trip: prints each absolute path, NUL-terminated.
Command resolve_command(const std::vector<std::string>& paths);
Result<std::vector<std::string>> resolve(Runner& runner, const std::vector<std::string>& paths);
// Reads resolve_command's outcome (run in some batch on `where`): every path absolute, or an error.
Result<std::vector<std::string>> read_resolved(const Outcome& o, const std::vector<std::string>& paths,
                                               const std::string& where);
// `cmd` with each of its arguments that is one of `paths` resolved on the login node by the rule
// above before it runs (never the program, nor the script of `PROG -c SCRIPT`): a command that joins a batch
// before rv knows where a configured path lands (`rv run`'s push listing in the plan's discovery
// batch). A path that does not resolve exits 1 with rv_abs's message; stdin and the rest of argv
// reach `cmd` unchanged.
Command resolving(const Command& cmd, const std::vector<std::string>& paths);

// The most bytes one read of a log takes (#17): a multi-GB log is read in pieces, so neither the
// login node's batch temp files nor rv's memory ever hold more than this per stream.
inline constexpr std::size_t k_log_chunk = 4u << 20;

// `cat -- PATH`; `tail -c +N` (bytes from `offset`, at most `max_bytes`: `| head -c`; a file that
// cannot be read is exit 1); `tail -n N` (the last `lines`).
Command read_command(const std::string& path);
Command read_from_command(const std::string& path, std::size_t offset, std::size_t max_bytes = k_log_chunk);
Command last_lines_command(const std::string& path, int lines);

// A file rv waits for, and the size it had: the wait ends once the file holds more bytes than that.
struct Watched {
  std::string path;
  std::size_t size = 0;
};

// Waits on the login node, instead of sleeping here, until one of `files` has grown past its size
// (a race's claim written, a log's new output) or `max` has passed; exit 0 either way. A file of
// size 0 (nothing read yet: the claim, a job's first output) is looked at every 0.05 s with the
// shell's own `[ -s ]`, a file rv has read part of every 0.2 s with one `wc -c` (`sleep 0.05`
// where sleep takes fractions, else 1 s steps), so the first thing the job writes is seen within
// 0.05 s and one round trip, later output within 0.2 s, with no Slurm call.
Command wait_for_growth_command(const std::vector<Watched>& files, std::chrono::milliseconds max);

// Runs `wait` (a wait_for_growth_command) on the login node and returns when it ends; when it
// cannot run (the connection), sleeps here until `until` instead. An interrupt ends either at
// once; nothing is run or slept once `until` has passed. The race's and the follow's pauses.
void wait_or_sleep(Runner& runner, Clock& clock, const Command& wait, std::chrono::steady_clock::time_point until);
// The rest of a pause whose wait could not run on the login node, slept here until `until`
// (nothing once it has passed, or on an interrupt): wait_or_sleep's rule, for a wait that ran in a
// batch with other commands (the race's poll, the follow's reads).
void sleep_until(Clock& clock, std::chrono::steady_clock::time_point until);

// Writes `content` (on stdin, never in argv) to PATH with mode 0600, its directory created 0700,
// atomically (a temporary file renamed into place).
Command write_private_command(const std::string& path, std::string content);

// Removes PATH... (`rm -f`, each resolved by the rule above, so a record's `~/.rv/...` path
// works), even while an interrupt is pending (cleanup). Exit 1 when one could not be removed.
Command remove_command(const std::vector<std::string>& paths);

} // namespace rv::proc::remote
