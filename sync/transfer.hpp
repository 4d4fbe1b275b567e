#pragma once
// Pushing a project's files to a directory on the cluster and pulling files back: one plan
// (what to send, what to delete) from the local selection and the remote manifest, then rsync
// over ssh where both sides have it, else SFTP through rv's own SSH session. A dry run stops
// after the plan, so it shows exactly what a real push does.

#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "core/ssh/options.hpp"
#include "sync/files.hpp"
#include "sync/rsync.hpp"
#include "sync/target.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::sync {

// One entry of a remote directory, from `find -printf`.
struct RemoteEntry {
  std::string path; // relative to the listed directory
  char type = 'f';  // 'f' file, 'l' symlink, 'd' directory, other find %y letters
  std::uint64_t size = 0;
  std::int64_t mtime_s = 0;
  unsigned mode = 0;
  std::string link_target;
};

// The command that lists `dir` on the cluster (nothing when it does not exist): NUL-separated
// records of type, size, mtime, mode, link target and path.
proc::Command manifest_command(const std::string& dir);
// Parses its output.
Result<std::vector<RemoteEntry>> parse_manifest(std::string_view out);

struct TransferPlan {
  std::vector<LocalEntry> send;          // new or changed (size, mtime, mode, type or link target)
  std::vector<std::string> remove;       // remote files and links the selection no longer has
  std::vector<std::string> remove_trees; // remote directories where the selection has a file
  std::vector<std::string> remove_dirs;  // remote directories left empty, deepest first
  std::vector<std::string> make_dirs;    // directories the sent files need
  std::size_t unchanged = 0;
  std::uint64_t send_bytes = 0;
};

// What to send and delete so that the remote directory mirrors `local` (pure).
TransferPlan plan_transfer(const std::vector<LocalEntry>& local, const std::vector<RemoteEntry>& remote);

// How files move: rsync over ssh, or SFTP on rv's own session. `automatic` ("auto" in the config)
// takes rsync when both sides have it, or, for a small push, `inline_files`: the files ride on the
// apply step's stdin, in its round trip (never a setting: only `auto` chooses it).
enum class Transport { automatic, rsync, sftp, inline_files };

// "auto", "rsync", "sftp" or "inline".
std::string_view to_string(Transport t);
// The transport the config names ("auto", "rsync", "sftp"), or nullopt.
std::optional<Transport> parse_transport(std::string_view name);

// The most a push sends inside its apply step (docs/sync.md, "Small pushes"): files and links,
// and bytes of file content (base64 on the apply's stdin: a third more on the wire). Each file
// costs the login node a few processes (mktemp, tail, head, chmod, touch, mv); past this, rsync's
// own round trips cost less.
inline constexpr std::size_t k_inline_max_files = 16;
inline constexpr std::uint64_t k_inline_max_bytes = 256u << 10;

// Whether the plan's files go inside the apply step: `setting` is auto, the cluster has base64 and
// mktemp, and the plan sends something within the bounds above (pure).
bool sends_inline(Transport setting, bool remote_has_inline_tools, const TransferPlan& plan);

// What the cluster says about a push's target (or a pull's source) in the listing's round trip.
struct RemoteListing {
  bool has_rsync = false;
  bool has_inline_tools = false; // base64 and mktemp: a small push's files can ride in the apply
  std::vector<RemoteEntry> entries;
  TargetFacts target; // with a policy only
};

// The listing's commands (one round trip): the manifest of `dir`, whether the cluster has rsync,
// and, with `policy` (a push), what the cluster knows about `dir` for deciding where deletions
// are allowed and whether it has base64 and mktemp. Reads only: they may join another batch
// (`rv run`'s push listing rides in the plan's discovery batch).
std::vector<proc::Command> listing_commands(const std::string& dir, const TargetPolicy* policy);
// Reads their outcomes, in order; `where` names the cluster in errors.
Result<RemoteListing> read_listing(const std::vector<proc::Outcome>& outs, const std::string& dir,
                                   const TargetPolicy* policy, const std::string& where);

struct PushOptions {
  bool dry_run = false;
  Transport transport = Transport::automatic;
  proc::SshOptions ssh;                           // the connection, as rv's own session takes it (core/ssh/options.hpp)
  TargetPolicy target;                            // where deletions are allowed (sync/target.hpp)
  std::function<void(std::string_view)> progress; // one line per sent file (SFTP) or rsync's output
};

struct PushReport {
  Transport transport = Transport::sftp; // rsync, sftp or inline (or what would be used, in a dry run)
  TransferPlan plan;
  std::uint64_t wire_bytes =
      0; // bytes on the wire as rsync counts them; SFTP: file bytes sent; inline: the apply's stdin
  double seconds = 0;
  bool dry_run = false;
  bool mirrored = false;         // the plan's deletions were applied (or would be, in a dry run)
  std::vector<std::string> kept; // remote paths the project lacks, kept because the target is not rv's
  std::string note;              // why nothing was deleted ("" when mirrored)
};

// Makes `remote_dir` mirror `sel` (files below `root`), deleting only where options.target allows
// (sync/target.hpp); refuses the root, $HOME and rv's own directories. Two round trips on `remote`
// (manifest, then deletions and directories) plus the transfer, which a small push makes inside
// the second (sends_inline); `local` runs rsync. `listed`: the listing of `remote_dir` with
// options.target, made ahead in a batch of the caller's (listing_commands, read_listing): the push
// is then the apply alone, every decision and refusal the same.
Result<PushReport> push(proc::Runner& remote, proc::Runner& local, const std::filesystem::path& root,
                        const FileSelection& sel, const std::string& remote_dir, const PushOptions& options,
                        const RemoteListing* listed = nullptr);

struct PullReport {
  Transport transport = Transport::sftp;
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::string local_path;                 // where it went
  std::vector<std::string> skipped_links; // the cluster's symlinks not made here: they point outside
};

// Copies `remote_path` (a file or a directory, recursively) to `local_path`; an existing local
// directory receives it under its basename. Never deletes local files, and never writes outside the
// destination: the listing's paths are checked, a local link on the way is replaced by a directory
// and a remote link is made only when it stays inside (store::BeneathDir, docs/sync.md).
Result<PullReport> pull(proc::Runner& remote, proc::Runner& local, const std::string& remote_path,
                        const std::filesystem::path& local_path, const PushOptions& options);

} // namespace rv::sync
