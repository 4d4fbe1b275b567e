#pragma once
// Writing into a local directory tree whose layout comes from elsewhere (a pull's listing from the
// cluster) without ever leaving it: no path from the listing is trusted, no link on the way is
// followed (docs/sync.md, "Pulls stay inside their destination").

#include "core/result.hpp"
#include "core/unique_fd.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace rv::store {

// Whether `rel` is a plain relative path: not empty, not absolute, no empty, "." or ".."
// component ("a/b" is; "/a", "a//b", "./a", "a/../b" and "" are not).
bool is_plain_relative(std::string_view rel);

// Whether a symlink at `link_path` (relative to a root) with the target `target`, resolved from
// the link's own directory, stays inside the root: relative, and never above it on the way.
bool link_stays_inside(std::string_view link_path, std::string_view target);

// A directory (the root) that writes stay beneath. Every component below the root is opened with
// O_NOFOLLOW (openat2's RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS first, where the kernel has it); a
// symlink found where a directory is needed is replaced by a directory, as rsync does; a file's
// final component is replaced by rename, never written through.
class BeneathDir {
public:
  // Opens `root`, which must be a directory (a link to one is followed: the root is the user's).
  static Result<BeneathDir> open(const std::filesystem::path& root);

  // Makes `rel` and each directory above it, below the root. `rel` must be plain relative.
  Result<void> make_dirs(std::string_view rel);
  // Makes the symlink `rel` -> `target` (replacing a file or link there) when it stays inside the
  // root; false, with nothing made, when it would point outside (absolute, or above the root).
  Result<bool> make_symlink(std::string_view rel, const std::string& target);
  // Moves the file `from_name` of the directory `from_dir` (on the same file system) to `rel`,
  // making the directories above it; a file or link at `rel` is replaced, never followed.
  Result<void> move_in(int from_dir, const std::string& from_name, std::string_view rel);

  const std::filesystem::path& root() const { return m_root; }
  int fd() const { return m_fd.get(); }
  // How many symlinks were replaced by directories so far.
  int links_replaced() const { return m_links_replaced; }

private:
  BeneathDir(UniqueFd fd, std::filesystem::path root) : m_fd(std::move(fd)), m_root(std::move(root)) {}
  // The directory `rel` below the root, made where missing.
  Result<UniqueFd> open_dirs(std::string_view rel);
  Error failure(std::string_view what, std::string_view rel, int err) const;

  UniqueFd m_fd;
  std::filesystem::path m_root;
  int m_links_replaced = 0;
};

// A private directory (0700, a random name) made below a BeneathDir's root for files fetched by
// path before they are moved in; removed with whatever is left in it when this ends.
class StagingDir {
public:
  static Result<StagingDir> make(const BeneathDir& beneath);
  ~StagingDir();
  StagingDir(StagingDir&&) = default;
  StagingDir& operator=(StagingDir&&) = delete;
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  int fd() const { return m_fd.get(); }
  // The absolute path of `name` inside it.
  std::filesystem::path path_of(const std::string& name) const { return m_path / name; }

private:
  StagingDir(int parent, std::string name, UniqueFd fd, std::filesystem::path path)
      : m_parent(parent), m_name(std::move(name)), m_fd(std::move(fd)), m_path(std::move(path))
  {}
  int m_parent;
  std::string m_name;
  UniqueFd m_fd;
  std::filesystem::path m_path;
};

} // namespace rv::store
