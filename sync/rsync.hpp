#pragma once
// rsync as a transport (docs/sync.md, "Transfer"): the `ssh` command rsync runs, the remote spec
// it copies to, and the two copies rv makes with it (a list of files, one file). rsync's `ssh`
// gets the same settings as rv's own libssh session and is as strict about host keys.

#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::sync {

// How rsync reaches the cluster: the same settings rv's own SSH session uses.
struct SshTarget {
  std::string destination; // [user@]host[:port] or an ssh config alias; "" = this machine
  std::string ssh_config;  // "" = none
  std::string identity_file;
  std::string known_hosts; // replaces the ssh config's UserKnownHostsFile (proc::SshOptions)
  std::int64_t connect_timeout_s = 15;
  std::string known_hosts_fallback; // read beside it (proc::SshOptions)
};

// True when the "cluster" is this machine (no ssh).
bool is_local(const SshTarget& target);

// The `ssh` command line rsync runs (`-e`), from `target`, its words quoted for rsync's splitter
// (proc::rsync_quote). Host keys are checked strictly (BatchMode=yes, StrictHostKeyChecking=yes,
// rv's known_hosts file), whatever the user's ssh config says, as libssh does for rv.
Result<std::string> rsync_ssh_command(const SshTarget& target);
// `dir` as rsync names it on the cluster: `host:dir`, `user@host:dir`, or `dir` locally.
Result<std::string> rsync_remote_spec(const SshTarget& target, const std::string& dir);

// Copies `paths` (relative to `from`, NUL-separated on stdin) to `to` with `rsync -a`; `progress`
// gets each file name rsync reports. Returns the bytes rsync sent on the wire. A symlink that
// points outside the copied tree is not made (`--safe-links`): a pull stays inside its destination.
// `rewrite`: every listed file is written anew, to a temporary file renamed over the old one
// (`--ignore-times`), even when only its mode changed; rsync would otherwise chmod it in place,
// and a hard link to it (a job's snapshot, sync/snapshot.hpp) would change too.
Result<std::uint64_t> rsync_files(proc::Runner& local, const SshTarget& target,
                                  const std::function<void(std::string_view)>& progress, const std::string& from,
                                  const std::string& to, const std::vector<std::string>& paths, bool rewrite = false);
// Copies one file `from` to `to` with `rsync -a`.
Result<void> rsync_file(proc::Runner& local, const SshTarget& target, const std::string& from, const std::string& to);

} // namespace rv::sync
