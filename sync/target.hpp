#pragma once
// Where a push may delete (docs/sync.md, "What a push may delete"). A push mirrors the project,
// deletions included, only into a directory that rv owns: one marked with a `.rv-workspace` file
// (written by rv when it creates the directory, or when the user passes --delete) whose proof line
// is the HMAC of the directory's physical path under a key only this user's rv holds (so neither a
// marker a project carries nor one copied from another directory counts), or the project's own
// workspace. Any other non-empty directory receives the files and keeps everything
// else. The file-system root, the home directory, rv's remote root, the sync root and every
// ancestor of them are refused outright, and a symlinked target is never followed for deletion.
// A directory that its group or others can write (or that is not the user's) is never mirrored
// into: a co-user could swap a listed entry for a symlink before the deletions run (N4).

#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rv::sync {

// The marker file at the top of every directory rv may mirror into.
inline constexpr std::string_view k_workspace_marker = ".rv-workspace";
// True when the relative path `rel` names a marker (at any depth): never part of a transfer.
inline bool is_workspace_marker(std::string_view rel)
{
  return rel == k_workspace_marker || (rel.ends_with(k_workspace_marker) && rel.size() > k_workspace_marker.size() &&
                                       rel[rel.size() - k_workspace_marker.size() - 1] == '/');
}

// What the push asks for.
struct TargetPolicy {
  // The local secret that signs markers (app::workspace_key); "" = no marker is trusted or written.
  std::string marker_key;
  bool owned = false;        // the project's workspace below the sync root (rv made it)
  bool allow_delete = false; // --delete: mirror into an unmarked directory and mark it
  // Absolute paths that must never be the target or below it (rv's remote root, the sync root).
  // The root directory and $HOME are always added.
  std::vector<std::string> protect;
  // Absolute paths that must never be the target, an ancestor of it or anything inside it: rv's
  // own state (the remote root with its requests, logs and checkpoints; the cache root), where a
  // push could delete a live request's claim or secrets file (N8). Not for the project's own
  // workspace, which lives inside the remote root.
  std::vector<std::string> protect_inside;
};

// protect then protect_inside: the paths whose physical form the facts command reports.
std::vector<std::string> protected_paths(const TargetPolicy& policy);

// What the cluster says about the target, in the listing's round trip.
struct TargetFacts {
  bool is_symlink = false;
  bool exists = false; // follows a symlink
  bool is_dir = false;
  bool marked = false;                       // holds a regular `.rv-workspace` file (proof unchecked)
  std::string marker;                        // its first 512 bytes
  std::string resolved;                      // the physical path the target has, or will have once created (mkdir -p)
  bool shared = false;                       // a directory its group or others may write, or not the user's
  std::string physical;                      // `pwd -P` of the target; "" when it does not exist
  std::string home;                          // $HOME as the shell has it
  std::string home_physical;                 // `pwd -P` of $HOME
  std::vector<std::string> protect_physical; // `pwd -P` of each of protected_paths() ("" = missing)
};

// The command that gathers TargetFacts for `dir` with `protect` (run by the remote runner).
proc::Command target_facts_command(const std::string& dir, const std::vector<std::string>& protect);
// Parses its output.
Result<TargetFacts> parse_target_facts(std::string_view out, std::size_t protect_count);

struct TargetDecision {
  bool mirror = false;       // apply the plan's deletions
  bool write_marker = false; // mark the directory as rv's, with `marker_text`
  std::string marker_text;   // the content of rv's marker here (with its proof; "" without a key)
  std::string note;          // why deletions are off, for the user ("" when mirroring)
};

// Decides (pure): an error when the target must never be written; otherwise whether the push may
// delete there. `remote_empty`: the listing found nothing (marker aside).
Result<TargetDecision> decide_target(const std::string& dir, const TargetFacts& facts, const TargetPolicy& policy,
                                     bool remote_empty);

// The content of the marker that proves `key`'s rv owns the directory whose physical path is `dir`.
std::string marker_text(std::string_view key, std::string_view dir);
// True when `marker` (a marker file's content) proves that for `dir`; never with an empty key.
bool marker_proves(std::string_view marker, std::string_view key, std::string_view dir);

// Splits output made of NUL-terminated fields (find -printf, the facts script); an error when
// the last field has no terminator (a truncated answer).
Result<std::vector<std::string_view>> split_nul_fields(std::string_view out);

// `path` made lexically normal: no empty, `.` or trailing components, `..` folded ("/" stays).
std::string normal_remote_path(std::string_view path);

// True when `a` is `b` or one of its ancestors (both absolute and normal).
bool same_or_ancestor(std::string_view a, std::string_view b);

} // namespace rv::sync
