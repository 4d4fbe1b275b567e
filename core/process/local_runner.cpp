#include "core/process/local_runner.hpp"
#include "core/platform/platform.hpp"
#include "core/process/local_user.hpp"

#include "core/interrupt.hpp"
#include "core/process/shell.hpp"
#include "core/store/temp_file.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace rv::proc {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto k_kill_grace = std::chrono::seconds(2); // SIGTERM, then SIGKILL after this

struct ChildPipe {
  int fd[2] = {-1, -1};
  ~ChildPipe()
  {
    close_end(0);
    close_end(1);
  }
  void close_end(int i)
  {
    if (fd[i] >= 0) {
      ::close(fd[i]);
      fd[i] = -1;
    }
  }
  bool open() { return platform::cloexec_pipe(fd) == 0; }
};

// Children get default signal dispositions (rv ignores SIGPIPE and catches SIGINT/SIGTERM);
// `own_group` puts the child in a new process group.
void init_spawn_attr(posix_spawnattr_t& attr, bool own_group)
{
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGDEF;
  if (own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags = static_cast<short>(flags | POSIX_SPAWN_SETPGROUP);
  }
  posix_spawnattr_setflags(&attr, flags);
}

std::string errno_text()
{
  return std::strerror(errno);
}

} // namespace

bool on_path(const std::string& program)
{
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0;
  }
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (true) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return true;
    }
    if (colon == std::string_view::npos) {
      return false;
    }
    rest.remove_prefix(colon + 1);
  }
}

Result<Outcome> LocalRunner::run(const Command& cmd)
{
  if (cmd.argv.empty()) {
    return fail(ErrorCode::usage, "empty command");
  }
  ++m_round_trips;
  ChildPipe in, out, err;
  if (!in.open() || !out.open() || !err.open()) {
    return fail(ErrorCode::io, "cannot create pipes: " + errno_text());
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  // Own process group, so a timeout kills grandchildren too (`sh -c 'sleep 100'`).
  posix_spawnattr_t attr;
  init_spawn_attr(attr, true);

  std::vector<char*> argv;
  argv.reserve(cmd.argv.size() + 1);
  for (const auto& a : cmd.argv) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);

  const auto start = SteadyClock::now();
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return fail(ErrorCode::io, fmt::format("cannot run {}: {}", cmd.argv[0], std::strerror(rc)),
                rc == ENOENT ? "is it installed and on PATH?" : "");
  }
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);

  std::string input = cmd.stdin_data.value_or("");
  std::size_t written = 0;
  if (input.empty()) {
    in.close_end(1);
  } else {
    ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  }

  Outcome outcome;
  bool killing = false;
  SteadyClock::time_point kill_at{};
  // Past the timeout or on an interrupt: SIGTERM to the group, SIGKILL after a grace period.
  auto enforce_limits = [&] {
    const auto now = SteadyClock::now();
    if (!killing && cmd.timeout.count() > 0 && now - start >= cmd.timeout) {
      outcome.timed_out = true;
      killing = true;
    }
    if (!killing && !cmd.uninterruptible && interrupt_signal() != 0) {
      killing = true;
    }
    if (killing) {
      if (kill_at == SteadyClock::time_point{}) {
        ::kill(-pid, SIGTERM);
        kill_at = now + k_kill_grace;
      } else if (now >= kill_at) {
        ::kill(-pid, SIGKILL);
      }
    }
  };
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    pollfd fds[3];
    int n = 0;
    int out_i = -1, err_i = -1, in_i = -1;
    if (out.fd[0] >= 0) {
      out_i = n;
      fds[n++] = {out.fd[0], POLLIN, 0};
    }
    if (err.fd[0] >= 0) {
      err_i = n;
      fds[n++] = {err.fd[0], POLLIN, 0};
    }
    if (in.fd[1] >= 0) {
      in_i = n;
      fds[n++] = {in.fd[1], POLLOUT, 0};
    }
    enforce_limits();
    int r = ::poll(fds, static_cast<nfds_t>(n), 100);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    auto drain = [&](int idx, ChildPipe& p, std::string& sink, const OutputSink& stream) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) {
        return;
      }
      ssize_t got = ::read(p.fd[0], buf, sizeof buf);
      if (got > 0) {
        sink.append(buf, static_cast<std::size_t>(got));
        if (stream) {
          stream(std::string_view(buf, static_cast<std::size_t>(got)));
        }
      } else if (got == 0 || errno != EINTR) {
        p.close_end(0);
      }
    };
    drain(out_i, out, outcome.out, cmd.on_stdout);
    drain(err_i, err, outcome.err, cmd.on_stderr);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = ::write(in.fd[1], input.data() + written, input.size() - written);
      if (put > 0) {
        written += static_cast<std::size_t>(put);
      }
      if ((put < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
        in.close_end(1);
      }
    }
  }
  in.close_end(1);

  // The pipes may close before the child exits (it closed them itself): keep the limits.
  int status = 0;
  while (true) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) {
      break;
    }
    enforce_limits();
    ::usleep(10000);
  }
  // The group leader is gone; make sure no stray member of its group survives a timeout.
  if (killing) {
    ::kill(-pid, SIGKILL);
  }
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  spdlog::debug("local: {} -> exit {} signal {} in {} ms", cmd.argv[0], outcome.exit_code, outcome.signal,
                outcome.elapsed.count());
  if (killing && !outcome.timed_out) {
    return fail(ErrorCode::interrupted, fmt::format("interrupted while running {}", cmd.argv[0]));
  }
  return outcome;
}

Result<std::vector<Outcome>> LocalRunner::run_batch(const std::vector<Command>& cmds)
{
  if (cmds.empty()) {
    return std::vector<Outcome>{};
  }
  Command whole;
  whole.argv = {"/bin/sh", "-s"};
  whole.stdin_data = batch_script(cmds);
  whole.timeout = std::chrono::milliseconds(0);
  whole.uninterruptible = std::all_of(cmds.begin(), cmds.end(), [](const Command& c) { return c.uninterruptible; });
  for (const auto& c : cmds) {
    if (c.timeout.count() > 0) {
      whole.timeout += c.timeout + std::chrono::seconds(5);
    }
  }
  RV_TRY(outcome, run(whole));
  if (outcome.timed_out) {
    return fail(ErrorCode::timeout, fmt::format("a batch of {} commands timed out", cmds.size()));
  }
  return parse_batch_output(outcome.out, cmds.size());
}

std::string LocalRunner::user()
{
  return local_user_name();
}

Result<int> LocalRunner::run_interactive(const std::vector<std::string>& argv)
{
  if (argv.empty()) {
    return fail(ErrorCode::usage, "empty command");
  }
  ++m_round_trips;
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  // The child shares our terminal and process group, so Ctrl-C reaches it as usual.
  posix_spawnattr_t attr;
  init_spawn_attr(attr, false);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return fail(ErrorCode::io, fmt::format("cannot run {}: {}", argv[0], std::strerror(rc)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

// Copies `from` to a temporary file beside `to`, sets its mode and mtime, renames it over `to`.
// The temp file has a random name and is created exclusively, never through a symlink, and its
// mode and times are set on the open descriptor: a co-user who can write the directory can
// neither make rv truncate another file nor chmod one (N4).
Result<std::uint64_t> copy_atomically(const std::string& from, const std::string& to, const FileMeta& meta)
{
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    return fail(ErrorCode::io, fmt::format("cannot read {}: {}", from, std::strerror(errno)));
  }
  auto created = store::create_temp_beside(to);
  if (!created) {
    ::close(in);
    return fail(ErrorCode::io, fmt::format("cannot write {}: {}", to, created.error().message));
  }
  const int out = created->fd;
  const std::string tmp = created->path.string();
  std::uint64_t copied = 0;
  bool ok = true;
  char buf[65536];
  while (ok) {
    auto n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    for (ssize_t done = 0; ok && done < n;) {
      auto w = ::write(out, buf + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) {
        continue;
      }
      ok = w > 0;
      done += w > 0 ? w : 0;
    }
    copied += static_cast<std::uint64_t>(n);
  }
  ::close(in);
  const timespec times[2] = {{meta.mtime_s, 0}, {meta.mtime_s, 0}};
  ok = ok && ::fchmod(out, static_cast<mode_t>(meta.mode & 07777)) == 0 && ::futimens(out, times) == 0;
  const std::string why = ok ? std::string() : std::strerror(errno);
  ok = ::close(out) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), to.c_str()) != 0) {
    const std::string reason = why.empty() ? std::strerror(errno) : why;
    ::unlink(tmp.c_str());
    return fail(ErrorCode::io, fmt::format("cannot write {}: {}", to, reason));
  }
  return copied;
}

} // namespace

Result<std::uint64_t> LocalRunner::put_file(const std::string& local_path, const std::string& remote_path,
                                            const FileMeta& meta)
{
  return copy_atomically(local_path, remote_path, meta);
}

Result<void> LocalRunner::put_symlink(const std::string& target, const std::string& remote_path)
{
  ::unlink(remote_path.c_str());
  if (::symlink(target.c_str(), remote_path.c_str()) != 0) {
    return fail(ErrorCode::io, fmt::format("cannot create the symlink {}: {}", remote_path, std::strerror(errno)));
  }
  return {};
}

Result<std::uint64_t> LocalRunner::get_file(const std::string& remote_path, const std::string& local_path)
{
  struct stat st {};
  if (::stat(remote_path.c_str(), &st) != 0) {
    return fail(ErrorCode::io, fmt::format("cannot read {}: {}", remote_path, std::strerror(errno)));
  }
  return copy_atomically(remote_path, local_path, FileMeta{st.st_mode & 07777u, st.st_mtime});
}

} // namespace rv::proc
