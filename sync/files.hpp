#pragma once
// Which files of a project are sent: in a git project, tracked plus untracked-not-ignored files
// (`git ls-files -co --exclude-standard`); otherwise every file minus the default ignores and the
// root .gitignore; in both cases minus the root `.rvignore`. docs/sync.md has the rules.

#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "sync/ignore.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rv::sync {

enum class EntryType { file, symlink };

// One file to send, relative to the project root ('/'-separated).
struct LocalEntry {
  std::string path;
  EntryType type = EntryType::file;
  std::uint64_t size = 0;
  std::int64_t mtime_s = 0;
  unsigned mode = 0644;
  std::string link_target; // symlinks only
};

// A file that is not sent, and why (too large, a symlink leaving the project...).
struct Skipped {
  std::string path;
  std::string why;
};

struct FileSelection {
  bool git = false;
  std::vector<LocalEntry> entries; // sorted by path
  std::vector<Skipped> skipped;
  std::uint64_t total_bytes = 0;
};

struct SelectOptions {
  std::uint64_t max_file_bytes = 100ull << 20; // larger files are skipped (0 = no limit)
  std::size_t max_files = 200000;              // more than this is an error (wrong root?)
};

// Filters `candidates` (root-relative paths) by `rules`, stats them (lstat, never following
// links): missing paths (deleted but still tracked) are dropped, directories (submodules) and
// other special files skipped, files over the size limit skipped, symlinks kept only when their
// target stays inside the project (relative), so they resolve the same on the cluster.
FileSelection select_files(const std::filesystem::path& root, std::vector<std::string> candidates,
                           const IgnoreRules& rules, const SelectOptions& options);

// Walks `root` without following links, pruning directories `rules` ignores; root-relative
// paths of everything else that is not a directory.
Result<std::vector<std::string>> walk_files(const std::filesystem::path& root, const IgnoreRules& rules,
                                            std::size_t max_files);

// Splits `sep`-separated records (`git ls-files -z` output, lines) into non-empty strings.
std::vector<std::string> split_records(std::string_view text, char sep);

// A local file's content ("" when it cannot be read: .rvignore and friends are optional).
std::string read_text_file(const std::filesystem::path& path);

// The files to send from the project at `root`. `local` runs git (a LocalRunner).
// Where `rv sync pull REQUEST` puts a request's outputs unless told (`<project>/rv-outputs/`): a push
// never sends it and git ignores it (rv writes `*` in its .gitignore), so a pull neither comes back
// on the next run nor marks the tree dirty (ux-review-3 N11).
inline constexpr const char* k_pulled_outputs_dir = "rv-outputs";

Result<FileSelection> list_project_files(const std::filesystem::path& root, proc::Runner& local,
                                         const SelectOptions& options);

// "1.2 MiB", "340 B".
std::string human_bytes(std::uint64_t n);

// Tells whether `root` is the top of a git work tree (has a `.git` directory or file).
bool is_git_root(const std::filesystem::path& root);

} // namespace rv::sync
