// The Linux side of the portability seam (platform.hpp): the calls rv made before the seam, as
// they were.
#if defined(__linux__)

#include "core/platform/platform.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <linux/openat2.h>
#include <sstream>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace rv::platform::linux_side {

std::optional<uid_t> peer_uid(int fd)
{
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return std::nullopt;
  }
  return cred.uid;
}

std::string executable_path()
{
  char exe[4096];
  const auto n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : "";
}

std::string self_exec_path()
{
  return "/proc/self/exe";
}

std::vector<int> open_fds()
{
  std::vector<int> fds;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (auto* e = ::readdir(d)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (end != e->d_name && *end == '\0' && fd != ::dirfd(d)) {
        fds.push_back(static_cast<int>(fd));
      }
    }
    ::closedir(d);
  }
  std::sort(fds.begin(), fds.end());
  return fds;
}

void close_from(int lowest)
{
  ::close_range(static_cast<unsigned>(lowest), ~0U, 0);
}

int cloexec_pipe(int fds[2])
{
  return ::pipe2(fds, O_CLOEXEC);
}

int cloexec_socket(int domain, int type, int protocol)
{
  return ::socket(domain, type | SOCK_CLOEXEC, protocol);
}

int cloexec_accept(int listen_fd, bool nonblocking)
{
  return ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0));
}

ssize_t send_nosignal(int fd, const void* data, std::size_t size, int flags)
{
  return ::send(fd, data, size, flags | MSG_NOSIGNAL);
}

bool forbid_inspection()
{
  return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
}

void secure_zero(void* data, std::size_t size)
{
  ::explicit_bzero(data, size);
}

bool random_bytes(void* data, std::size_t size)
{
  auto* bytes = static_cast<unsigned char*>(data);
  std::size_t got = 0;
  while (got < size) {
    const auto n = ::getrandom(bytes + got, size - got, 0);
    if (n < 0 && errno != EINTR) {
      return false;
    }
    got += n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  return true;
}

std::string process_identity(pid_t pid)
{
  // /proc/PID/stat field 22: the start time in clock ticks since boot.
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) {
    return "";
  }
  std::istringstream fields(stat.substr(paren + 2)); // field 3 (state) onwards
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return fmt::format("{} {}", pid, field);
}

int open_dir_beneath(int root, const std::string& path)
{
#if defined(SYS_openat2)
  open_how how{};
  how.flags = static_cast<std::uint64_t>(O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root, path.c_str(), &how, sizeof how));
#else
  (void)root;
  (void)path;
  errno = ENOSYS;
  return -1;
#endif
}

} // namespace rv::platform::linux_side

#endif
