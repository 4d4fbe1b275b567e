#include "core/process/daemon.hpp"
#include "core/platform/platform.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace rv::proc {

Result<Detached> detach(const std::string& log_path, bool* child_ready)
{
  int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) {
    return fail(ErrorCode::io, fmt::format("cannot open {}: {}", log_path, std::strerror(errno)));
  }
  int pipe_fds[2];
  if (platform::cloexec_pipe(pipe_fds) != 0) {
    ::close(log);
    return fail(ErrorCode::io, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return fail(ErrorCode::io, fmt::format("cannot fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::setsid();
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::close(devnull);
    ::close(log);
    return Detached{0, pipe_fds[1]};
  }
  ::close(log);
  ::close(pipe_fds[1]);
  char byte = 0;
  ssize_t n;
  while ((n = ::read(pipe_fds[0], &byte, 1)) < 0 && errno == EINTR) {
  }
  ::close(pipe_fds[0]);
  *child_ready = n == 1;
  if (!*child_ready) {
    int status = 0;
    ::waitpid(pid, &status, 0); // it exited before it was ready: reap it
  }
  return Detached{pid, -1};
}

Result<void> spawn_detached(const std::vector<std::string>& argv, const std::string& log_path)
{
  if (argv.empty()) {
    return fail(ErrorCode::usage, "nothing to start");
  }
  int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) {
    return fail(ErrorCode::io, fmt::format("cannot open {}: {}", log_path, std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    return fail(ErrorCode::io, fmt::format("cannot fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::setsid();
    if (::fork() != 0) {
      ::_exit(0); // the first child ends at once: the second is nobody's zombie
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    // Nothing else of the parent's: a lock its caller holds (a script's flock) must not live on
    // in the background rv.
    platform::close_from(3);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(log);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {};
}

void ready(Detached& d)
{
  if (d.ready_fd >= 0) {
    char byte = 1;
    [[maybe_unused]] auto n = ::write(d.ready_fd, &byte, 1);
    ::close(d.ready_fd);
    d.ready_fd = -1;
  }
}

bool process_alive(pid_t pid)
{
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

bool terminate_process(pid_t pid, int wait_ms)
{
  if (!process_alive(pid)) {
    return true;
  }
  ::kill(pid, SIGTERM);
  for (int waited = 0; waited < wait_ms; waited += 50) {
    ::waitpid(pid, nullptr, WNOHANG); // reaps it when it is our own child
    if (!process_alive(pid)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !process_alive(pid);
}

} // namespace rv::proc
