#include "core/ssh/hold.hpp"

#include "core/platform/platform.hpp"
#include "core/process/daemon.hpp"
#include "core/process/process_title.hpp"
#include "core/ssh/hold_server.hpp"
#include "core/ssh/session.hpp"
#include "core/store/state_dir.hpp"
#include "core/store/temp_file.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace rv::proc::hold {
namespace {

Error infra(std::string what)
{
  return Error{ErrorCode::io, "held connection: " + std::move(what), "set connection_persist 0 to connect directly"};
}

// A listening socket at `path`, only for this user (0600 inside the 0700 directory).
// A socket listening at `path`, and the file its bind made there.
struct Listening {
  int fd;
  SocketFile file;
};

Result<Listening> listen_at(const std::string& path)
{
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return std::unexpected(infra(fmt::format("socket path too long: {}", path)));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = platform::cloexec_socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    return std::unexpected(infra(fmt::format("socket: {}", std::strerror(errno))));
  }
  const auto old = ::umask(077);
  const int bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (bound != 0 || ::listen(fd, 64) != 0) {
    const int err = errno;
    ::close(fd);
    return std::unexpected(infra(fmt::format("cannot listen on {}: {}", path, std::strerror(err))));
  }
  auto file = socket_file(path); // under the start lock: no other holder binds here meanwhile
  if (!file) {
    ::close(fd);
    return std::unexpected(infra(fmt::format("{} vanished after bind", path)));
  }
  return Listening{fd, *file};
}

// In the holder: every descriptor but the ones it needs is closed, so that it holds no caller's
// lock file or pipe for the next 30 minutes.
void close_others(std::initializer_list<int> keep)
{
  for (int fd : platform::open_fds()) {
    if (fd > 2 && std::find(keep.begin(), keep.end(), fd) == keep.end()) {
      ::close(fd);
    }
  }
}

// The start lock: taken within `wait`, or not at all (another rv holds it all that time: it may
// sit at a second-factor prompt in another terminal, security-review-3 S10).
class FileLock {
public:
  FileLock(const std::string& path, std::chrono::milliseconds wait)
      : m_fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600))
  {
    if (m_fd < 0) {
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    bool told = false;
    while (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
      const auto waited = std::chrono::steady_clock::now() - start;
      if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= wait) {
        ::close(m_fd);
        m_fd = -1;
        return;
      }
      if (!told && waited >= std::chrono::seconds(5)) {
        spdlog::warn("waiting for another rv that is starting the held connection (a second-factor prompt in "
                     "another terminal?)");
        told = true;
      }
      ::usleep(50'000);
    }
    m_locked = true;
  }
  ~FileLock()
  {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return m_locked; }

private:
  int m_fd;
  bool m_locked = false;
};

// `dir` is a directory (not a symlink) of this user that no one else may enter.
bool is_private(const std::string& dir)
{
  struct stat st {};
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() && (st.st_mode & 077) == 0;
}

// The socket directory when `preferred` (private, verified) is too long for a Unix socket's path:
// a directory made by mkdtemp in /tmp (a name no other user can create first), its path kept in
// PREFERRED/short-dir, where only this user may write. One that is no longer a private
// directory of this user is replaced by a new one.
Result<std::string> short_dir(const std::string& preferred, bool create)
{
  const auto pointer = preferred + "/short-dir";
  std::string dir;
  if (std::ifstream in(pointer); in) {
    std::getline(in, dir);
  }
  if (!dir.empty() && sockets_fit(dir) && is_private(dir)) {
    return dir;
  }
  if (!create) {
    return std::unexpected(infra(fmt::format("{} has no socket directory", preferred)));
  }
  auto made = fmt::format("/tmp/rv-{}-XXXXXX", ::getuid());
  if (::mkdtemp(made.data()) == nullptr) {
    return std::unexpected(infra(fmt::format("cannot create a directory in /tmp: {}", std::strerror(errno))));
  }
  auto temp = store::create_temp_beside(pointer);
  if (!temp) {
    ::rmdir(made.c_str());
    return std::unexpected(infra(temp.error().message));
  }
  const auto line = made + "\n";
  const bool written = ::write(temp->fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(temp->fd);
  if (!written || ::rename(temp->path.c_str(), pointer.c_str()) != 0) {
    ::unlink(temp->path.c_str());
    ::rmdir(made.c_str());
    return std::unexpected(infra(fmt::format("cannot write {}", pointer)));
  }
  spdlog::warn("{} is too long for a Unix socket's path (at most {} bytes with the socket's name): the held "
               "connections' sockets are in {} (0700, its name kept in {})",
               preferred, sizeof(sockaddr_un::sun_path) - 1, made, pointer);
  return made;
}

// A holder that did not answer two hellos (stopped, hung) is ended before it is replaced, when the
// process that `pid_file` names is still that holder (pid and start time): SIGTERM, then SIGCONT
// so that a stopped one ends now, closing its session (a login left open on the server
// otherwise) and leaving its successor's socket alone (remove_own_socket). security-review-3 S3.
void end_stale_holder(const std::string& pid_file)
{
  std::string recorded;
  if (std::ifstream in(pid_file); in) {
    std::getline(in, recorded);
  }
  const auto pid = static_cast<pid_t>(std::atol(recorded.c_str()));
  if (pid <= 0 || recorded != platform::process_identity(pid)) {
    return; // gone (or its pid is another process's now)
  }
  spdlog::info("held connection: the holder pid {} does not answer (stopped or hung): ending it", pid);
  ::kill(pid, SIGTERM);
  ::kill(pid, SIGCONT);
}

} // namespace

Result<std::string> private_dir(const SshOptions& options, bool create)
{
  std::string dir = options.runtime_dir;
  if (dir.empty()) {
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    dir = runtime_dir(xdg ? xdg : "", store::state_dir().string());
  }
  if (!create && ::access(dir.c_str(), F_OK) != 0) {
    return std::unexpected(infra(fmt::format("{} does not exist", dir)));
  }
  if (create) {
    std::error_code ec; // the parents (the state directory) as needed; the directory itself 0700
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return std::unexpected(infra(fmt::format("cannot create {}: {}", dir, std::strerror(errno))));
  }
  if (!is_private(dir)) {
    return std::unexpected(infra(fmt::format("{} is not a private directory of this user (0700)", dir)));
  }
  if (!sockets_fit(dir)) {
    return short_dir(dir, create);
  }
  return dir;
}

Result<std::string> socket_path(const SshOptions& options, bool create)
{
  RV_TRY(dir, private_dir(options, create));
  std::string config_text; // "" when there is none (or it cannot be read: the session fails on it)
  if (!options.ssh_config.empty()) {
    std::ifstream in(options.ssh_config, std::ios::binary);
    config_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return socket_in(dir, options, config_text);
}

std::optional<Client> find_live(const SshOptions& options)
{
  auto path = socket_path(options, false);
  if (!path) {
    return std::nullopt;
  }
  Client client(*path);
  if (!client.hello()) {
    return std::nullopt;
  }
  return client;
}

Result<Client> held_connection(ssh::Session& session, const SshOptions& options)
{
  RV_TRY(path, socket_path(options));
  Client client(path);
  if (client.hello()) {
    return client;
  }
  FileLock lock(path + ".lock", options.start_wait);
  if (!lock.locked()) {
    return std::unexpected(infra(fmt::format("another rv has been starting the held connection to {} for {} s "
                                             "(it may be waiting for a second-factor code in another terminal)",
                                             options.destination, options.start_wait.count())));
  }
  if (client.hello()) {
    return client; // another rv started it while this one waited
  }
  const auto base = path.substr(0, path.size() - 5);
  end_stale_holder(base + ".pid");
  ::unlink(path.c_str()); // stale: its process is gone or does not answer
  RV_TRY_VOID(session.connect());
  RV_TRY(listening, listen_at(path));
  const int listen_fd = listening.fd;
  bool ready = false;
  const auto log = base + ".log";
  auto detached = detach(log, &ready);
  if (!detached) {
    ::close(listen_fd);
    ::unlink(path.c_str());
    return std::unexpected(detached.error());
  }
  if (detached->child == 0) {
    const int session_fd = ssh_get_fd(session.get());
    close_others({session_fd, listen_fd, detached->ready_fd});
    // Nothing of the command that started it in `ps` (a secret may be on that line), and no
    // mount kept busy by its working directory (clients send absolute local paths).
    set_process_title(fmt::format("rv _hold {}", session.label()));
    if (::chdir("/") != 0) {
      spdlog::warn("held connection: cannot chdir to /: {}", std::strerror(errno));
    }
    spdlog::info("held connection to {}: pid {}, socket {}", session.label(), ::getpid(), path);
    if (std::ofstream pid_file(base + ".pid", std::ios::trunc); pid_file) { // for end_stale_holder
      pid_file << platform::process_identity(::getpid()) << '\n';
    }
    proc::ready(*detached);
    ssh::serve_held_session(session, listen_fd, path, listening.file, options.persist);
    std::_Exit(0);
  }
  ::close(listen_fd);
  session.abandon(); // the holder owns it now
  if (!ready) {
    return std::unexpected(infra(fmt::format("the background holder did not start (see {})", log)));
  }
  spdlog::debug("ssh: holding the connection to {} in pid {} ({})", session.label(), detached->child, path);
  return client;
}

std::vector<nlohmann::json> list_holders(const std::string& dir)
{
  std::vector<nlohmann::json> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    return out;
  }
  std::vector<std::string> sockets;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.ends_with(".sock")) {
      sockets.push_back(dir + "/" + name);
    }
  }
  ::closedir(d);
  std::sort(sockets.begin(), sockets.end());
  for (const auto& s : sockets) {
    auto status = Client(s).hello("status");
    nlohmann::json j = status ? *status : nlohmann::json{{"stale", true}};
    j["socket"] = s;
    out.push_back(std::move(j));
  }
  return out;
}

bool quit_holder(const std::string& socket)
{
  return Client(socket).hello("quit").has_value();
}

int relay_main(const std::vector<std::string>& args)
{
  // args: SOCKET [-l USER] [-p PORT] HOST WORD... (rsync adds -l for a user@host spec; the held
  // session already has its user and port).
  std::size_t at = 1;
  while (at < args.size() && args[at].starts_with("-")) {
    at += (args[at] == "-l" || args[at] == "-p") ? 2u : 1u;
  }
  if (args.empty() || at + 1 >= args.size()) {
    std::fputs("rv: error: --internal-ssh-relay SOCKET HOST COMMAND...\n", stderr);
    return 255;
  }
  std::string line;
  for (std::size_t i = at + 1; i < args.size(); ++i) {
    line += (line.empty() ? "" : " ") + args[i];
  }
  auto status = Client(args[0]).relay(line, false);
  if (!status) {
    std::fputs(fmt::format("rv: error: {}\n", status.error().message).c_str(), stderr);
    return 255;
  }
  return *status;
}

std::vector<std::string> relay_command(const std::string& socket)
{
  std::string self = platform::executable_path();
  if (self.empty()) {
    self = "rv";
  }
  return {self, "--internal-ssh-relay", socket};
}

} // namespace rv::proc::hold
