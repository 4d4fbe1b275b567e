// The portability seam (core/platform/platform.hpp, docs/portability.md): each function on both
// sides that run here, Linux's and the POSIX one macOS uses, so that the code macOS would run is
// exercised on every Linux CI run. What only a Mac can run (_NSGetExecutablePath, proc_pidinfo,
// SO_NOSIGPIPE, memset_s) is named in docs/portability.md and not claimed here.

#include "core/platform/platform.hpp"

#include "unit/skip.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
namespace platform = rv::platform;

namespace {

// One side of the seam, as function pointers, so that every test runs on each.
struct Side {
  const char* name;
  std::optional<uid_t> (*peer_uid)(int);
  std::string (*executable_path)();
  std::string (*self_exec_path)();
  std::vector<int> (*open_fds)();
  void (*close_from)(int);
  int (*cloexec_pipe)(int*);
  int (*cloexec_socket)(int, int, int);
  int (*cloexec_accept)(int, bool);
  ssize_t (*send_nosignal)(int, const void*, std::size_t, int);
  bool (*forbid_inspection)();
  void (*secure_zero)(void*, std::size_t);
  bool (*random_bytes)(void*, std::size_t);
  std::string (*process_identity)(pid_t);
  int (*open_dir_beneath)(int, const std::string&);
};

#define RV_SIDE(ns)                                                                                                    \
  Side                                                                                                                 \
  {                                                                                                                    \
    #ns, &ns::peer_uid, &ns::executable_path, &ns::self_exec_path, &ns::open_fds, &ns::close_from, &ns::cloexec_pipe,  \
        &ns::cloexec_socket, &ns::cloexec_accept, &ns::send_nosignal, &ns::forbid_inspection, &ns::secure_zero,        \
        &ns::random_bytes, &ns::process_identity, &ns::open_dir_beneath                                                \
  }

std::vector<Side> sides()
{
  std::vector<Side> all{RV_SIDE(platform::posix_side)};
#if defined(__linux__)
  all.push_back(RV_SIDE(platform::linux_side));
#endif
  return all;
}

bool has_cloexec(int fd)
{
  return (::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
}
bool is_nonblocking(int fd)
{
  return (::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
}

// Runs `body` in a forked child (it may close descriptors or change the process); its exit code.
template <class F>
int in_child(F&& body)
{
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::_exit(body());
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

struct TempDir {
  fs::path path;
  TempDir()
  {
    std::string tmpl = (fs::temp_directory_path() / "rv-platform-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir()
  {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void make_file(const fs::path& p, fs::perms perms)
{
  std::ofstream(p) << "#!/bin/sh\n";
  fs::permissions(p, perms);
}

// A listening loopback TCP socket on a port the kernel chose, and that port.
std::pair<int, int> listen_loopback()
{
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  return {fd, ntohs(addr.sin_port)};
}

int connect_loopback(int port)
{
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

} // namespace

TEST_CASE("platform: this system's side is Linux's on Linux")
{
#if defined(__linux__)
  CHECK(platform::self_exec_path() == "/proc/self/exe");
#else
  CHECK(platform::self_exec_path() == platform::posix_side::executable_path());
#endif
}

TEST_CASE("platform: peer_uid names the uid at the other end of a unix socket, and nothing for a pipe")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    const auto uid = side.peer_uid(sv[0]);
    REQUIRE(uid.has_value());
    CHECK(*uid == ::getuid());
    ::close(sv[0]);
    ::close(sv[1]);
    int p[2];
    REQUIRE(::pipe(p) == 0);
    CHECK_FALSE(side.peer_uid(p[0]).has_value());
    ::close(p[0]);
    ::close(p[1]);
  }
}

TEST_CASE("platform: executable_path is this test binary, on both sides")
{
#if defined(__linux__)
  const auto linux_path = platform::linux_side::executable_path();
  REQUIRE_FALSE(linux_path.empty());
  CHECK(fs::path(linux_path).is_absolute());
  CHECK(fs::equivalent(linux_path, "/proc/self/exe"));
  // The POSIX side off macOS resolves main's argv[0] (kept by remember_argv0).
  const std::string before = platform::remembered_argv0();
  platform::remember_argv0(linux_path.c_str());
  CHECK(platform::posix_side::executable_path() == fs::canonical(linux_path).string());
  CHECK(platform::posix_side::self_exec_path() == fs::canonical(linux_path).string());
  platform::remember_argv0("");
  CHECK(platform::posix_side::executable_path().empty());
  platform::remember_argv0(before.c_str());
#else
  CHECK_FALSE(platform::executable_path().empty());
#endif
}

TEST_CASE("platform: resolve_argv0 finds argv[0] as a shell would")
{
  using platform::posix_side::resolve_argv0;
  TempDir t;
  fs::create_directories(t.path / "bin1");
  fs::create_directories(t.path / "bin2");
  make_file(t.path / "bin1" / "rv", fs::perms::owner_read | fs::perms::owner_write); // not executable
  make_file(t.path / "bin2" / "rv", fs::perms::owner_all);
  make_file(t.path / "here", fs::perms::owner_all);
  const auto dir = t.path.string();
  const auto path_env = dir + "/bin1:" + dir + "/bin2";

  CHECK(resolve_argv0("rv", path_env, "/") == dir + "/bin2/rv"); // the first executable one
  CHECK(resolve_argv0("rv", dir + "/bin1", "/").empty());
  CHECK(resolve_argv0("here", "/nonexistent:", dir) == dir + "/here"); // an empty entry: the cwd
  CHECK(resolve_argv0("bin2/rv", "", dir) == dir + "/bin2/rv");        // a slash: against the cwd
  CHECK(resolve_argv0(dir + "/bin2/rv", "", "/") == dir + "/bin2/rv");
  CHECK(resolve_argv0("./missing", path_env, dir).empty());
  CHECK(resolve_argv0("", path_env, dir).empty());
  CHECK(resolve_argv0("bin2", dir, "/").empty()); // a directory is not an executable
}

TEST_CASE("platform: open_fds lists what is open, the same on both sides")
{
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::vector<std::vector<int>> seen;
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    const auto fds = side.open_fds();
    CHECK(std::is_sorted(fds.begin(), fds.end()));
    CHECK(std::count(fds.begin(), fds.end(), fd) == 1);
    seen.push_back(fds);
  }
  CHECK(std::adjacent_find(seen.begin(), seen.end(), std::not_equal_to<>()) == seen.end());
  ::close(fd);
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    const auto fds = side.open_fds();
    CHECK(std::count(fds.begin(), fds.end(), fd) == 0);
  }
}

TEST_CASE("platform: close_from closes every descriptor from the lowest up, and none below (in a child)")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    const int rc = in_child([&] {
      const int low = ::open("/dev/null", O_RDONLY);
      if (low < 0 || ::dup2(low, 40) != 40 || ::dup2(low, 41) != 41 || ::dup2(low, 300) != 300) {
        return 10;
      }
      side.close_from(41);
      if (::fcntl(40, F_GETFD) == -1) {
        return 11; // below: kept
      }
      if (::fcntl(41, F_GETFD) != -1 || ::fcntl(300, F_GETFD) != -1) {
        return 12; // from 41 up: closed
      }
      return 0;
    });
    CHECK(rc == 0);
  }
}

TEST_CASE("platform: cloexec_pipe and cloexec_socket set close-on-exec")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    int p[2] = {-1, -1};
    REQUIRE(side.cloexec_pipe(p) == 0);
    CHECK(has_cloexec(p[0]));
    CHECK(has_cloexec(p[1]));
    CHECK(::write(p[1], "x", 1) == 1);
    char c = 0;
    CHECK(::read(p[0], &c, 1) == 1);
    CHECK(c == 'x');
    ::close(p[0]);
    ::close(p[1]);

    const int s = side.cloexec_socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(s >= 0);
    CHECK(has_cloexec(s));
    int type = 0;
    socklen_t len = sizeof type;
    REQUIRE(::getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &len) == 0);
    CHECK(type == SOCK_STREAM);
    ::close(s);
    CHECK(side.cloexec_socket(-1, SOCK_STREAM, 0) == -1);
  }
}

TEST_CASE("platform: cloexec_accept sets close-on-exec and blocking as asked, whatever the listener's")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    auto [listener, port] = listen_loopback();
    // A non-blocking listener: off Linux its accepted sockets would inherit that unless told.
    REQUIRE(::fcntl(listener, F_SETFL, ::fcntl(listener, F_GETFL) | O_NONBLOCK) == 0);
    const int c1 = connect_loopback(port);
    const int a1 = side.cloexec_accept(listener, false);
    REQUIRE(a1 >= 0);
    CHECK(has_cloexec(a1));
    CHECK_FALSE(is_nonblocking(a1));
    const int c2 = connect_loopback(port);
    const int a2 = side.cloexec_accept(listener, true);
    REQUIRE(a2 >= 0);
    CHECK(has_cloexec(a2));
    CHECK(is_nonblocking(a2));
    CHECK(side.cloexec_accept(listener, false) == -1); // nobody waiting: EAGAIN
    CHECK((errno == EAGAIN || errno == EWOULDBLOCK));
    for (int fd : {c1, a1, c2, a2, listener}) {
      ::close(fd);
    }
  }
}

TEST_CASE("platform: send_nosignal to a closed peer fails with EPIPE and raises no SIGPIPE (in a child)")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    const int rc = in_child([&] {
      std::signal(SIGPIPE, SIG_DFL); // what would kill rv if a send raised it
      int sv[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        return 10;
      }
      ::close(sv[1]);
      const auto n = side.send_nosignal(sv[0], "x", 1, 0);
      return n == -1 && errno == EPIPE ? 0 : 11;
    });
    CHECK(rc == 0); // 128 + SIGPIPE if the signal came
  }
}

TEST_CASE("platform: forbid_inspection succeeds (Linux: the process is no longer dumpable, in a child)")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    CHECK(in_child([&] { return side.forbid_inspection() ? 0 : 1; }) == 0);
  }
#if defined(__linux__)
  // Linux's side: /proc/PID of a non-dumpable process belongs to root (what keeps other processes
  // of the user out of its memory).
  const int rc = in_child([] {
    if (!platform::linux_side::forbid_inspection()) {
      return 1;
    }
    struct stat st {};
    return ::stat("/proc/self/mem", &st) == 0 && st.st_uid == 0 ? 0 : 2;
  });
  CHECK(rc == 0);
#endif
}

TEST_CASE("platform: secure_zero zeroes the bytes it is given and no others")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    std::string s(64, 'k');
    side.secure_zero(s.data() + 8, 48);
    CHECK(s.substr(0, 8) == std::string(8, 'k'));
    CHECK(s.substr(8, 48) == std::string(48, '\0'));
    CHECK(s.substr(56) == std::string(8, 'k'));
    side.secure_zero(s.data(), 0);
    CHECK(s[0] == 'k');
  }
}

TEST_CASE("platform: random_bytes fills more than one getentropy call's 256 bytes, differently each time")
{
  for (const auto& side : sides()) {
    CAPTURE(side.name);
    std::vector<unsigned char> a(1000, 0), b(1000, 0);
    REQUIRE(side.random_bytes(a.data(), a.size()));
    REQUIRE(side.random_bytes(b.data(), b.size()));
    CHECK(a != b);
    // 744 bytes past the first 256: all zero has probability 2^-5952.
    CHECK(std::any_of(a.begin() + 256, a.end(), [](unsigned char c) { return c != 0; }));
    CHECK(side.random_bytes(a.data(), 0));
  }
}

TEST_CASE("platform: process_identity tells a process from another that got its pid")
{
#if defined(__linux__)
  const auto self = platform::linux_side::process_identity(::getpid());
  CHECK(self.starts_with(std::to_string(::getpid()) + " "));
  CHECK(self.size() > std::to_string(::getpid()).size() + 1);
  CHECK(platform::linux_side::process_identity(::getpid()) == self); // stable
  // A process that has ended and been reaped has none.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(platform::linux_side::process_identity(pid).empty());
#endif
#if !defined(__APPLE__)
  // Off Linux and macOS the system does not say: "", and rv then ends no process by pid alone.
  CHECK(platform::posix_side::process_identity(::getpid()).empty());
#endif
}

TEST_CASE("platform: open_dir_beneath opens a directory below the root, never through a symlink or out")
{
  TempDir t;
  fs::create_directories(t.path / "a" / "b");
  fs::create_directory_symlink(t.path / "a", t.path / "link");
  const int root = ::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(root >= 0);
  // POSIX: no such call; the caller walks (core/store/beneath.cpp).
  CHECK(platform::posix_side::open_dir_beneath(root, "a/b") == -1);
  CHECK(errno == ENOSYS);
#if defined(__linux__)
  const int fd = platform::linux_side::open_dir_beneath(root, "a/b");
  if (fd < 0 && errno == ENOSYS) {
    rv::test::report_skipped("this kernel has no openat2 (Linux < 5.6)");
  } else {
    REQUIRE(fd >= 0);
    CHECK(has_cloexec(fd));
    ::close(fd);
    CHECK(platform::linux_side::open_dir_beneath(root, "link/b") == -1);
    CHECK(platform::linux_side::open_dir_beneath(root, "../" + t.path.filename().string()) == -1);
    CHECK(platform::linux_side::open_dir_beneath(root, "a/missing") == -1);
  }
#endif
  ::close(root);
}
