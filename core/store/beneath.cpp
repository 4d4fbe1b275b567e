#include "core/store/beneath.hpp"

#include "core/platform/platform.hpp"
#include "core/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rv::store {
namespace {

constexpr int k_dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Calls `f` on each component of a plain relative path; stops when it returns false.
template <class F>
void for_each_component(std::string_view rel, F&& f)
{
  while (!rel.empty()) {
    const auto slash = rel.find('/');
    if (!f(rel.substr(0, slash)) || slash == std::string_view::npos) {
      return;
    }
    rel.remove_prefix(slash + 1);
  }
}

// "a/b/c" -> {"a/b", "c"}; "c" -> {"", "c"}.
std::pair<std::string_view, std::string> split_leaf(std::string_view rel)
{
  const auto slash = rel.rfind('/');
  if (slash == std::string_view::npos) {
    return {std::string_view{}, std::string(rel)};
  }
  return {rel.substr(0, slash), std::string(rel.substr(slash + 1))};
}

// The directory `rel` below `root` in one call, when the kernel can refuse every symlink and
// every escape on the way itself (openat2, Linux 5.6: core/platform/); an invalid descriptor
// otherwise.
UniqueFd open_beneath_fast(int root, std::string_view rel)
{
  return UniqueFd(platform::open_dir_beneath(root, std::string(rel)));
}

} // namespace

bool is_plain_relative(std::string_view rel)
{
  if (rel.empty() || rel.front() == '/') {
    return false;
  }
  bool ok = true;
  for_each_component(rel, [&](std::string_view part) {
    ok = !part.empty() && part != "." && part != "..";
    return ok;
  });
  return ok && rel.back() != '/';
}

bool link_stays_inside(std::string_view link_path, std::string_view target)
{
  if (target.empty() || target.front() == '/') {
    return false;
  }
  // The link's own directory: one level per '/' in its path.
  int depth = static_cast<int>(std::count(link_path.begin(), link_path.end(), '/'));
  bool inside = true;
  for_each_component(target, [&](std::string_view part) {
    if (part == "..") {
      inside = --depth >= 0;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    return inside;
  });
  return inside;
}

Result<BeneathDir> BeneathDir::open(const std::filesystem::path& root)
{
  std::error_code ec;
  auto absolute = std::filesystem::absolute(root, ec);
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot open {}: {}", root.string(), ec.message()));
  }
  UniqueFd fd(::open(absolute.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) {
    return fail(ErrorCode::io, fmt::format("cannot open {}: {}", absolute.string(), std::strerror(errno)));
  }
  return BeneathDir(std::move(fd), std::move(absolute));
}

Error BeneathDir::failure(std::string_view what, std::string_view rel, int err) const
{
  return Error{ErrorCode::io,
               fmt::format("cannot {} {}: {}", what, (m_root / std::string(rel)).string(), std::strerror(err)), ""};
}

Result<UniqueFd> BeneathDir::open_dirs(std::string_view rel)
{
  if (rel.empty()) {
    return UniqueFd(::dup(m_fd.get()));
  }
  if (!is_plain_relative(rel)) {
    return fail(ErrorCode::parse, fmt::format("refused the path '{}': not a plain relative path", rel));
  }
  if (auto fast = open_beneath_fast(m_fd.get(), rel)) {
    return fast;
  }
  // One component at a time, never following a link: the walk cannot leave the root.
  UniqueFd current(::dup(m_fd.get()));
  std::size_t done = 0;
  Result<void> status;
  for_each_component(rel, [&](std::string_view part) {
    done += part.size() + (done == 0 ? 0 : 1);
    const auto so_far = rel.substr(0, done);
    const std::string name(part);
    UniqueFd next(::openat(current.get(), name.c_str(), k_dir_flags));
    if (!next && errno == ENOENT) {
      if (::mkdirat(current.get(), name.c_str(), 0777) != 0 && errno != EEXIST) {
        status = std::unexpected(failure("create", so_far, errno));
        return false;
      }
      next = UniqueFd(::openat(current.get(), name.c_str(), k_dir_flags));
    } else if (!next && (errno == ELOOP || errno == ENOTDIR)) {
      struct stat st {};
      if (::fstatat(current.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) {
        status = fail(ErrorCode::io,
                      fmt::format("{} is a file here, where the cluster has a directory", (m_root / so_far).string()),
                      "move it away and pull again");
        return false;
      }
      // A link where a directory belongs: replaced by a directory, as rsync does.
      if (::unlinkat(current.get(), name.c_str(), 0) != 0 || ::mkdirat(current.get(), name.c_str(), 0777) != 0) {
        status = std::unexpected(failure("replace the symlink", so_far, errno));
        return false;
      }
      ++m_links_replaced;
      next = UniqueFd(::openat(current.get(), name.c_str(), k_dir_flags));
    }
    if (!next) {
      status = std::unexpected(failure("open", so_far, errno));
      return false;
    }
    current = std::move(next);
    return true;
  });
  if (!status) {
    return std::unexpected(status.error());
  }
  return current;
}

Result<void> BeneathDir::make_dirs(std::string_view rel)
{
  RV_TRY(fd, open_dirs(rel));
  (void)fd;
  return {};
}

Result<bool> BeneathDir::make_symlink(std::string_view rel, const std::string& target)
{
  if (!is_plain_relative(rel)) {
    return fail(ErrorCode::parse, fmt::format("refused the path '{}': not a plain relative path", rel));
  }
  if (!link_stays_inside(rel, target)) {
    return false;
  }
  auto [parent, leaf] = split_leaf(rel);
  RV_TRY(dir, open_dirs(parent));
  struct stat st {};
  if (::fstatat(dir.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return fail(ErrorCode::io,
                  fmt::format("{} is a directory here, where the cluster has a symlink", (m_root / rel).string()),
                  "move it away and pull again");
    }
    if (::unlinkat(dir.get(), leaf.c_str(), 0) != 0) {
      return std::unexpected(failure("replace", rel, errno));
    }
  }
  if (::symlinkat(target.c_str(), dir.get(), leaf.c_str()) != 0) {
    return std::unexpected(failure("create the symlink", rel, errno));
  }
  return true;
}

Result<void> BeneathDir::move_in(int from_dir, const std::string& from_name, std::string_view rel)
{
  if (!is_plain_relative(rel)) {
    return fail(ErrorCode::parse, fmt::format("refused the path '{}': not a plain relative path", rel));
  }
  auto [parent, leaf] = split_leaf(rel);
  RV_TRY(dir, open_dirs(parent));
  if (::renameat(from_dir, from_name.c_str(), dir.get(), leaf.c_str()) != 0) {
    if (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST) {
      return fail(ErrorCode::io,
                  fmt::format("{} is a directory here, where the cluster has a file", (m_root / rel).string()),
                  "move it away and pull again");
    }
    return std::unexpected(failure("write", rel, errno));
  }
  return {};
}

Result<StagingDir> StagingDir::make(const BeneathDir& beneath)
{
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto name = ".rv-pull-" + random_hex(8);
    if (::mkdirat(beneath.fd(), name.c_str(), 0700) != 0) {
      if (errno == EEXIST) {
        continue;
      }
      return fail(ErrorCode::io,
                  fmt::format("cannot create a directory in {}: {}", beneath.root().string(), std::strerror(errno)),
                  "check the permissions of the destination");
    }
    UniqueFd fd(::openat(beneath.fd(), name.c_str(), k_dir_flags));
    if (!fd) {
      const int err = errno;
      ::unlinkat(beneath.fd(), name.c_str(), AT_REMOVEDIR);
      return fail(ErrorCode::io,
                  fmt::format("cannot open {}: {}", (beneath.root() / name).string(), std::strerror(err)));
    }
    auto path = beneath.root() / name;
    return StagingDir(beneath.fd(), std::move(name), std::move(fd), std::move(path));
  }
  return fail(ErrorCode::io, fmt::format("cannot create a private directory in {}", beneath.root().string()));
}

StagingDir::~StagingDir()
{
  if (!m_fd) {
    return;
  }
  // What a failed fetch left (it removes its own temp file; a file not yet moved in stays).
  if (auto* dir = ::fdopendir(::dup(m_fd.get()))) {
    std::vector<std::string> names;
    while (auto* e = ::readdir(dir)) {
      std::string_view n = e->d_name;
      if (n != "." && n != "..") {
        names.emplace_back(n);
      }
    }
    ::closedir(dir);
    for (const auto& n : names) {
      ::unlinkat(m_fd.get(), n.c_str(), 0);
    }
  }
  m_fd.close();
  ::unlinkat(m_parent, m_name.c_str(), AT_REMOVEDIR);
}

} // namespace rv::store
