#pragma once
// rsync as a transport (docs/sync.md, "Transfer"): the `ssh` command rsync runs, the remote spec
// it copies to, and the two copies rv makes with it (a list of files, one file). rsync's `ssh`
// takes the very SshOptions rv's own libssh session takes (core/ssh/options.hpp), so it finds the
// same held connection, and it is as strict about host keys.

#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "core/ssh/options.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::sync {

// True when the "cluster" is this machine (no destination: no ssh).
bool is_local(const proc::SshOptions& target);

// The `ssh` command line rsync runs (`-e`), from `target`, its words quoted for rsync's splitter
// (proc::rsync_quote). Host keys are checked strictly (BatchMode=yes, StrictHostKeyChecking=yes,
// rv's known_hosts file), whatever the user's ssh config says, as libssh does for rv.
Result<std::string> rsync_ssh_command(const proc::SshOptions& target);
// `dir` as rsync names it on the cluster: `host:dir`, `user@host:dir`, or `dir` locally.
Result<std::string> rsync_remote_spec(const proc::SshOptions& target, const std::string& dir);

// Copies `paths` (relative to `from`, NUL-separated on stdin) to `to` with `rsync -a`; `progress`
// gets each file name rsync reports. Returns the bytes rsync sent on the wire. A symlink that
// points outside the copied tree is not made (`--safe-links`): a pull stays inside its destination.
// `rewrite`: every listed file is written anew, to a temporary file renamed over the old one
// (`--ignore-times`), even when only its mode changed; rsync would otherwise chmod it in place,
// and a hard link to it (a job's snapshot, sync/snapshot.hpp) would change too.
Result<std::uint64_t> rsync_files(proc::Runner& local, const proc::SshOptions& target,
                                  const std::function<void(std::string_view)>& progress, const std::string& from,
                                  const std::string& to, const std::vector<std::string>& paths, bool rewrite = false);
// Copies one file `from` to `to` with `rsync -a`.
Result<void> rsync_file(proc::Runner& local, const proc::SshOptions& target, const std::string& from,
                        const std::string& to);

} // namespace rv::sync
