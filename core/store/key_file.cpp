#include "core/store/key_file.hpp"
#include "core/platform/platform.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rv::store {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_key_hex = 64;

Result<std::string> random_key_hex()
{
  std::array<unsigned char, k_key_hex / 2> bytes{};
  if (!platform::random_bytes(bytes.data(), bytes.size())) {
    return fail(ErrorCode::io, fmt::format("cannot read random bytes: {}", std::strerror(errno)));
  }
  std::string hex;
  for (auto b : bytes) {
    hex += fmt::format("{:02x}", b);
  }
  return hex;
}

Result<std::string> read_key(const fs::path& path)
{
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return fail(ErrorCode::io, fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  }
  struct stat st {};
  std::array<char, k_key_hex + 2> buf{};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const auto n = stat_ok ? ::read(fd, buf.data(), buf.size()) : -1;
  ::close(fd);
  const std::string hint = fmt::format("remove {} (rv makes a new key; directories it marked before are then "
                                       "treated as unmarked: nothing is deleted there without --delete)",
                                       path.string());
  if (!stat_ok || !S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
    return fail(ErrorCode::config,
                fmt::format("{} is not a private file (mode {:o})", path.string(), st.st_mode & 0777), hint);
  }
  std::string key(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  if (key.size() != k_key_hex || key.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return fail(ErrorCode::config, fmt::format("{} does not hold an rv key", path.string()), hint);
  }
  return key;
}

} // namespace

Result<std::string> load_or_create_key(const fs::path& path)
{
  if (::access(path.c_str(), F_OK) == 0 || errno != ENOENT) {
    return read_key(path);
  }
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  ::chmod(path.parent_path().c_str(), 0700);
  RV_TRY(key, random_key_hex());
  RV_TRY(suffix, random_key_hex());
  const auto tmp = fs::path(path.string() + ".tmp." + suffix.substr(0, 16));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", tmp.string(), std::strerror(errno)));
  }
  const bool written = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && ::fsync(fd) == 0;
  ::close(fd);
  // link() puts the whole file in place or fails when another rv made it first: then its key wins.
  const bool linked = written && ::link(tmp.c_str(), path.c_str()) == 0;
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (!linked && !(written && link_errno == EEXIST)) {
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", path.string(), std::strerror(link_errno)));
  }
  return read_key(path);
}

} // namespace rv::store
