// The POSIX side of the portability seam (platform.hpp): what macOS (and POSIX) offer where Linux
// has a call of its own. Compiled on every system, Linux included, where its unit tests run
// (tests/unit/core/test_platform.cpp); what cannot run on Linux is marked `__APPLE__`.
#include "core/platform/platform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <libproc.h>
#include <mach-o/dyld.h>
#include <sys/random.h>
#endif

namespace rv::platform {
namespace {

std::string g_argv0; // a copy: the process title overwrites argv (core/process/process_title.cpp)

// The highest descriptor number to try, plus one: the soft limit, bounded (it may be "unlimited").
int fd_limit()
{
  const long max = ::sysconf(_SC_OPEN_MAX);
  constexpr long k_cap = 65536;
  return static_cast<int>(max <= 0 ? 1024 : std::min(max, k_cap));
}

bool set_cloexec(int fd)
{
  const int flags = ::fcntl(fd, F_GETFD);
  return flags >= 0 && ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

bool set_nonblocking(int fd, bool on)
{
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK)) == 0;
}

// macOS has no MSG_NOSIGNAL in older SDKs: the socket itself is told (rv also ignores SIGPIPE
// process-wide, core/interrupt.cpp).
void set_nosigpipe([[maybe_unused]] int fd)
{
#if defined(SO_NOSIGPIPE)
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
}

// A socket fresh from socket() or accept(), given what the Linux calls set in the same call; the
// descriptor, or -1 (closed) with errno.
int finish_socket(int fd, std::optional<bool> nonblocking)
{
  if (fd < 0) {
    return -1;
  }
  // Off Linux an accepted socket inherits the listener's O_NONBLOCK: set it as asked, both ways.
  if (!set_cloexec(fd) || (nonblocking && !set_nonblocking(fd, *nonblocking))) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  set_nosigpipe(fd);
  return fd;
}

bool is_executable_file(const std::string& path)
{
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

#if !defined(__APPLE__) && !defined(__FreeBSD__) && !defined(__OpenBSD__) && !defined(__NetBSD__)
// glibc has no getpeereid (this side is compiled on Linux for its tests): the same answer from
// SO_PEERCRED, as macOS's libc builds getpeereid on LOCAL_PEERCRED.
int getpeereid(int fd, uid_t* uid, gid_t* gid)
{
#if defined(SO_PEERCRED)
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return -1;
  }
  *uid = cred.uid;
  *gid = cred.gid;
  return 0;
#else
  (void)fd, (void)uid, (void)gid;
  errno = ENOSYS;
  return -1;
#endif
}
#else
using ::getpeereid;
#endif

} // namespace

void remember_argv0(const char* argv0)
{
  g_argv0 = argv0 ? argv0 : "";
}

const std::string& remembered_argv0()
{
  return g_argv0;
}

namespace posix_side {

std::optional<uid_t> peer_uid(int fd)
{
  uid_t uid = 0;
  gid_t gid = 0;
  if (getpeereid(fd, &uid, &gid) != 0) {
    return std::nullopt;
  }
  return uid;
}

std::string resolve_argv0(std::string_view argv0, std::string_view path_env, std::string_view cwd)
{
  if (argv0.empty()) {
    return "";
  }
  if (argv0.find('/') != std::string_view::npos) {
    std::string path = argv0.front() == '/' ? std::string(argv0) : fmt::format("{}/{}", cwd, argv0);
    return is_executable_file(path) ? path : "";
  }
  while (true) {
    const auto colon = path_env.find(':');
    auto dir = path_env.substr(0, colon);
    // An empty entry is the current directory (POSIX).
    std::string candidate = dir.empty() ? fmt::format("{}/{}", cwd, argv0) : fmt::format("{}/{}", dir, argv0);
    if (!candidate.empty() && candidate.front() != '/') {
      candidate = fmt::format("{}/{}", cwd, candidate);
    }
    if (is_executable_file(candidate)) {
      return candidate;
    }
    if (colon == std::string_view::npos) {
      return "";
    }
    path_env.remove_prefix(colon + 1);
  }
}

std::string executable_path()
{
  std::string path;
#if defined(__APPLE__)
  std::uint32_t size = 0;
  ::_NSGetExecutablePath(nullptr, &size); // the size it needs
  std::string buffer(size, '\0');
  if (::_NSGetExecutablePath(buffer.data(), &size) == 0) {
    path = buffer.c_str();
  }
#else
  char cwd[PATH_MAX];
  const char* env_path = std::getenv("PATH");
  path = resolve_argv0(g_argv0, env_path ? env_path : "", ::getcwd(cwd, sizeof cwd) ? cwd : "/");
#endif
  if (path.empty()) {
    return "";
  }
  char real[PATH_MAX];
  return ::realpath(path.c_str(), real) ? std::string(real) : path;
}

std::string self_exec_path()
{
  return executable_path();
}

std::vector<int> open_fds()
{
  std::vector<int> fds;
  for (int fd = 0, end = fd_limit(); fd < end; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) {
      fds.push_back(fd);
    }
  }
  return fds;
}

void close_from(int lowest)
{
  // macOS has no closefrom or close_range: every number up to the limit (close is
  // async-signal-safe; a number not open is EBADF).
  for (int fd = lowest, end = fd_limit(); fd < end; ++fd) {
    ::close(fd);
  }
}

int cloexec_pipe(int fds[2])
{
  if (::pipe(fds) != 0) {
    return -1;
  }
  if (!set_cloexec(fds[0]) || !set_cloexec(fds[1])) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    errno = err;
    return -1;
  }
  return 0;
}

int cloexec_socket(int domain, int type, int protocol)
{
  return finish_socket(::socket(domain, type, protocol), std::nullopt);
}

int cloexec_accept(int listen_fd, bool nonblocking)
{
  return finish_socket(::accept(listen_fd, nullptr, nullptr), nonblocking);
}

ssize_t send_nosignal(int fd, const void* data, std::size_t size, int flags)
{
#if defined(MSG_NOSIGNAL)
  flags |= MSG_NOSIGNAL;
#endif
  return ::send(fd, data, size, flags);
}

bool forbid_inspection()
{
  // macOS: another process of the user gets this one's memory only through task_for_pid, which
  // needs root or the debugger entitlement; the core limit is rv::forbid_core_dumps's. Nothing more.
  return true;
}

void secure_zero(void* data, std::size_t size)
{
#if defined(__APPLE__)
  ::memset_s(data, size, 0, size);
#else
  auto* volatile bytes = static_cast<volatile unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = 0;
  }
#endif
}

bool random_bytes(void* data, std::size_t size)
{
  // getentropy: macOS 10.12+, glibc 2.25+, the BSDs; at most 256 bytes a call.
  auto* bytes = static_cast<unsigned char*>(data);
  for (std::size_t done = 0; done < size;) {
    const std::size_t n = std::min<std::size_t>(size - done, 256);
    if (::getentropy(bytes + done, n) != 0) {
      return false;
    }
    done += n;
  }
  return true;
}

std::string process_identity([[maybe_unused]] pid_t pid)
{
#if defined(__APPLE__)
  proc_bsdinfo info{};
  if (::proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, sizeof info) != static_cast<int>(sizeof info)) {
    return "";
  }
  return fmt::format("{} {}.{:06}", pid, info.pbi_start_tvsec, info.pbi_start_tvusec);
#else
  return "";
#endif
}

int open_dir_beneath(int, const std::string&)
{
  errno = ENOSYS; // no RESOLVE_BENEATH: the caller walks the path with O_NOFOLLOW
  return -1;
}

} // namespace posix_side
} // namespace rv::platform
