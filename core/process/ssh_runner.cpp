#include "core/process/ssh_runner.hpp"

#include "core/interrupt.hpp"
#include "core/process/shell.hpp"

#include <fmt/format.h>
#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <termios.h>
#include <unistd.h>

namespace rv::proc {
namespace {

using Clock = std::chrono::steady_clock;

// The remote exit signal arrives as a channel request; libssh hands it to this callback.
void on_exit_signal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*, void* userdata)
{
  auto* name = static_cast<std::string*>(userdata);
  *name = signal ? signal : "";
}

int signal_number(const std::string& name)
{
  static const std::pair<const char*, int> names[] = {
      {"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ILL", 4},   {"ABRT", 6},  {"FPE", 8},  {"KILL", 9},
      {"SEGV", 11}, {"PIPE", 13}, {"ALRM", 14}, {"TERM", 15}, {"USR1", 10}, {"USR2", 12}};
  for (const auto& [n, v] : names) {
    if (name == n) {
      return v;
    }
  }
  return name.empty() ? 0 : 255;
}

void route_libssh_log(int priority, const char* function, const char* buffer, void*)
{
  spdlog::trace("libssh({}) {}: {}", priority, function ? function : "", buffer ? buffer : "");
}

} // namespace

Result<SshDestination> parse_destination(std::string_view dest)
{
  auto bad = [&](const char* why) {
    return fail(ErrorCode::usage, fmt::format("invalid host '{}': {}", dest, why),
                "use [user@]host[:port] or a Host alias from ~/.ssh/config");
  };
  SshDestination d;
  if (dest.empty()) {
    return bad("empty");
  }
  if (auto at = dest.rfind('@'); at != std::string_view::npos) {
    d.user = std::string(dest.substr(0, at));
    dest.remove_prefix(at + 1);
    if (d.user.empty()) {
      return bad("empty user");
    }
  }
  std::string_view port_text;
  bool has_port = false;
  if (!dest.empty() && dest.front() == '[') { // [v6addr]:port
    auto close = dest.find(']');
    if (close == std::string_view::npos) {
      return bad("missing ']'");
    }
    d.host = std::string(dest.substr(1, close - 1));
    auto rest = dest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return bad("junk after ']'");
      }
      port_text = rest.substr(1);
      has_port = true;
    }
  } else if (auto colon = dest.find(':');
             colon != std::string_view::npos && dest.find(':', colon + 1) == std::string_view::npos) {
    d.host = std::string(dest.substr(0, colon));
    port_text = dest.substr(colon + 1);
    has_port = true;
  } else {
    d.host = std::string(dest);
  }
  if (d.host.empty()) {
    return bad("empty host name");
  }
  for (char c : d.host) {
    if (c == ' ' || c == '/' || c == '\'' || c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return bad("unexpected character in host name");
    }
  }
  if (has_port) {
    int port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc{} || p != port_text.data() + port_text.size() || port < 1 ||
        port > 65535) {
      return bad("port must be 1-65535");
    }
    d.port = port;
  }
  return d;
}

struct SshRunner::Impl {
  SshOptions options;
  ssh_session session = nullptr;
  std::string label;           // user@host:port once connected
  std::string remote_user;     // once connected
  sftp_session sftp = nullptr; // opened on first file transfer

  ~Impl()
  {
    if (sftp) {
      sftp_free(sftp);
    }
    if (session) {
      ssh_disconnect(session);
      ssh_free(session);
    }
  }

  Error error(ErrorCode code, std::string message, std::string hint = {}) const
  {
    return Error{code, std::move(message), std::move(hint)};
  }

  Result<void> verify_host_key()
  {
    ssh_key key = nullptr;
    std::string fingerprint = "?";
    if (ssh_get_server_publickey(session, &key) == SSH_OK) {
      unsigned char* hash = nullptr;
      std::size_t hlen = 0;
      if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0) {
        char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
        if (fp) {
          fingerprint = fp;
          ssh_string_free_char(fp);
        }
        ssh_clean_pubkey_hash(&hash);
      }
      ssh_key_free(key);
    }
    const auto state = ssh_session_is_known_server(session);
    switch (state) {
    case SSH_KNOWN_HOSTS_OK:
      return {};
    case SSH_KNOWN_HOSTS_CHANGED:
      return std::unexpected(
          error(ErrorCode::host_key_changed,
                fmt::format("host key for {} has CHANGED (now {}); refusing to connect: this could be an attack", label,
                            fingerprint),
                "if the cluster's admins announced a new key, remove the old line with `ssh-keygen -R HOST` and "
                "connect once with ssh"));
    case SSH_KNOWN_HOSTS_OTHER:
      return std::unexpected(
          error(ErrorCode::host_key_changed,
                fmt::format("{} offered a key of another type than known_hosts holds ({}); refusing to connect", label,
                            fingerprint),
                "verify the key with the cluster's admins, then update known_hosts"));
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
      return std::unexpected(error(ErrorCode::host_key_unknown,
                                   fmt::format("host {} is not in known_hosts (its key is {}); refusing to trust it "
                                               "silently",
                                               label, fingerprint),
                                   "connect once with `ssh` to verify and record the key, or pass --known-hosts FILE"));
    case SSH_KNOWN_HOSTS_ERROR:
      break;
    }
    return std::unexpected(error(ErrorCode::host_key_unknown,
                                 fmt::format("cannot check the host key of {}: {}", label, ssh_get_error(session)),
                                 "check the known_hosts file is readable"));
  }

  Result<void> authenticate()
  {
    if (!options.identity_file.empty()) {
      ssh_key key = nullptr;
      if (ssh_pki_import_privkey_file(options.identity_file.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
        return std::unexpected(error(ErrorCode::auth_failed,
                                     fmt::format("cannot read private key {}", options.identity_file),
                                     "check the path, and that the key has no passphrase or is in ssh-agent"));
      }
      int rc = ssh_userauth_publickey(session, nullptr, key);
      ssh_key_free(key);
      if (rc == SSH_AUTH_SUCCESS) {
        return {};
      }
    }
    // Agent, then IdentityFile entries from the ssh config, then the default keys.
    int rc = ssh_userauth_publickey_auto(session, nullptr, nullptr);
    if (rc == SSH_AUTH_SUCCESS) {
      return {};
    }
    return std::unexpected(error(ErrorCode::auth_failed,
                                 fmt::format("{} refused every key (agent, config IdentityFile, defaults){}", label,
                                             rc == SSH_AUTH_ERROR ? fmt::format(": {}", ssh_get_error(session)) : ""),
                                 "load your key with `ssh-add`, or pass -i KEY; check `ssh HOST true` works"));
  }

  Result<void> connect()
  {
    if (session) {
      return {};
    }
    RV_TRY(dest, parse_destination(options.destination));
    session = ssh_new();
    if (!session) {
      return std::unexpected(error(ErrorCode::io, "cannot create an SSH session"));
    }
    if (spdlog::should_log(spdlog::level::trace)) {
      ssh_set_log_callback(route_libssh_log);
      int verbosity = SSH_LOG_PROTOCOL;
      ssh_options_set(session, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
    }
    ssh_options_set(session, SSH_OPTIONS_HOST, dest.host.c_str());
    // The ssh config fills in HostName, Port, User, IdentityFile, ProxyJump... for the alias;
    // what the user typed explicitly wins, so it is set afterwards.
    if (options.ssh_config.empty()) {
      int no = 0;
      ssh_options_set(session, SSH_OPTIONS_PROCESS_CONFIG, &no);
    } else if (ssh_options_parse_config(session, options.ssh_config.c_str()) != 0) {
      return std::unexpected(error(ErrorCode::config, fmt::format("cannot parse ssh config {}", options.ssh_config),
                                   ssh_get_error(session)));
    }
    if (!dest.user.empty()) {
      ssh_options_set(session, SSH_OPTIONS_USER, dest.user.c_str());
    }
    if (dest.port != 0) {
      unsigned int port = static_cast<unsigned int>(dest.port);
      ssh_options_set(session, SSH_OPTIONS_PORT, &port);
    }
    if (!options.known_hosts.empty()) {
      ssh_options_set(session, SSH_OPTIONS_KNOWNHOSTS, options.known_hosts.c_str());
    }
    long timeout = static_cast<long>(options.connect_timeout.count());
    ssh_options_set(session, SSH_OPTIONS_TIMEOUT, &timeout);

    char* user = nullptr;
    char* host = nullptr;
    unsigned int port = 22;
    ssh_options_get(session, SSH_OPTIONS_USER, &user);
    ssh_options_get(session, SSH_OPTIONS_HOST, &host);
    ssh_options_get_port(session, &port);
    label = fmt::format("{}@{}:{}", user ? user : "?", host ? host : dest.host, port);
    remote_user = user ? user : "";
    ssh_string_free_char(user);
    ssh_string_free_char(host);

    const auto start = Clock::now();
    if (ssh_connect(session) != SSH_OK) {
      std::string why = ssh_get_error(session);
      ssh_free(session);
      session = nullptr;
      const bool timed_out = why.find("imeout") != std::string::npos || why.find("timed out") != std::string::npos;
      return std::unexpected(error(ErrorCode::unreachable, fmt::format("cannot connect to {}: {}", label, why),
                                   timed_out ? "is the host up and reachable? raise --connect-timeout if it is slow"
                                             : "check the host name and port, and that you can reach it (VPN?)"));
    }
    if (auto r = verify_host_key(); !r) {
      ssh_disconnect(session);
      ssh_free(session);
      session = nullptr;
      return r;
    }
    if (auto r = authenticate(); !r) {
      ssh_disconnect(session);
      ssh_free(session);
      session = nullptr;
      return r;
    }
    spdlog::debug("ssh: connected to {} in {} ms", label,
                  std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    return {};
  }

  // Runs one remote command line; `input` goes to its stdin, then EOF.
  Result<Outcome> exec(const std::string& line, const std::string& input, const Command& cmd)
  {
    const auto start = Clock::now();
    ssh_channel channel = ssh_channel_new(session);
    if (!channel) {
      return std::unexpected(error(ErrorCode::unreachable, fmt::format("ssh {}: cannot open a channel", label)));
    }
    std::string exit_signal;
    ssh_channel_callbacks_struct callbacks{};
    callbacks.userdata = &exit_signal;
    callbacks.channel_exit_signal_function = on_exit_signal;
    ssh_callbacks_init(&callbacks);
    ssh_set_channel_callbacks(channel, &callbacks);
    auto close = [&] {
      ssh_channel_close(channel);
      ssh_channel_free(channel);
    };
    if (ssh_channel_open_session(channel) != SSH_OK || ssh_channel_request_exec(channel, line.c_str()) != SSH_OK) {
      std::string why = ssh_get_error(session);
      close();
      return std::unexpected(error(ErrorCode::unreachable, fmt::format("ssh {}: cannot run command: {}", label, why)));
    }
    spdlog::trace("ssh: exec {}", line);

    Outcome outcome;
    std::size_t written = 0;
    bool eof_sent = false;
    bool stopping = false;
    char buf[65536];
    while (true) {
      if (!eof_sent) {
        if (written < input.size()) {
          auto window = ssh_channel_window_size(channel);
          auto chunk = std::min<std::size_t>({input.size() - written, window, sizeof buf});
          if (chunk > 0) {
            int n = ssh_channel_write(channel, input.data() + written, static_cast<uint32_t>(chunk));
            if (n == SSH_ERROR) {
              break;
            }
            written += static_cast<std::size_t>(n);
          }
        }
        if (written >= input.size()) {
          ssh_channel_send_eof(channel);
          eof_sent = true;
        }
      }
      bool got = false;
      for (int is_stderr = 0; is_stderr < 2; ++is_stderr) {
        int n = ssh_channel_read_nonblocking(channel, buf, sizeof buf, is_stderr);
        if (n > 0) {
          got = true;
          std::string_view chunk(buf, static_cast<std::size_t>(n));
          (is_stderr ? outcome.err : outcome.out).append(chunk);
          const auto& sink = is_stderr ? cmd.on_stderr : cmd.on_stdout;
          if (sink) {
            sink(chunk);
          }
        } else if (n == SSH_ERROR) {
          std::string why = ssh_get_error(session);
          close();
          return std::unexpected(error(ErrorCode::unreachable, fmt::format("ssh {}: connection lost: {}", label, why)));
        }
      }
      if (!got && ssh_channel_is_eof(channel)) {
        break;
      }
      const bool over_time = cmd.timeout.count() > 0 && Clock::now() - start >= cmd.timeout;
      if (!stopping && (over_time || (!cmd.uninterruptible && interrupt_signal() != 0))) {
        // Ask the remote side to stop the command; closing the channel ends the session's
        // processes' stdio, so they see EOF/SIGPIPE even where sshd ignores signal requests.
        outcome.timed_out = over_time;
        ssh_channel_request_send_signal(channel, "TERM");
        stopping = true;
        break;
      }
      if (!got) {
        ssh_channel_poll_timeout(channel, 50, 0);
      }
    }
    if (stopping) {
      close();
      outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      if (!outcome.timed_out) {
        return std::unexpected(error(ErrorCode::interrupted, fmt::format("interrupted while running on {}", label)));
      }
      return outcome;
    }
    int status = ssh_channel_get_exit_status(channel);
    close();
    outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (!exit_signal.empty()) {
      outcome.signal = signal_number(exit_signal);
      outcome.exit_code = -1;
    } else {
      outcome.exit_code = status;
    }
    spdlog::debug("ssh: {} -> exit {} in {} ms", label, outcome.exit_code, outcome.elapsed.count());
    return outcome;
  }
};

SshRunner::SshRunner(SshOptions options) : m_impl(std::make_unique<Impl>())
{
  m_impl->options = std::move(options);
}

SshRunner::~SshRunner() = default;

Result<void> SshRunner::connect()
{
  return m_impl->connect();
}

Result<Outcome> SshRunner::run(const Command& cmd)
{
  if (cmd.argv.empty()) {
    return fail(ErrorCode::usage, "empty command");
  }
  if (auto r = connect(); !r) {
    return std::unexpected(r.error());
  }
  ++m_round_trips;
  // Whatever the login shell (fish, tcsh...), /bin/sh parses the command (docs/ssh.md, "Quoting").
  spdlog::trace("ssh: run {}", shell_join(cmd.argv));
  return m_impl->exec(login_shell_command(cmd.argv), cmd.stdin_data.value_or(""), cmd);
}

Result<std::vector<Outcome>> SshRunner::run_batch(const std::vector<Command>& cmds)
{
  if (cmds.empty()) {
    return std::vector<Outcome>{};
  }
  if (auto r = connect(); !r) {
    return std::unexpected(r.error());
  }
  ++m_round_trips;
  // The script travels on stdin: no quoting through the login shell, no ARG_MAX, nothing in ps.
  Command whole;
  whole.timeout = std::chrono::milliseconds(0);
  whole.uninterruptible = std::all_of(cmds.begin(), cmds.end(), [](const Command& c) { return c.uninterruptible; });
  for (const auto& c : cmds) {
    if (c.timeout.count() > 0) {
      whole.timeout += c.timeout + std::chrono::seconds(5);
    }
  }
  RV_TRY(outcome, m_impl->exec("exec /bin/sh -s", batch_script(cmds), whole));
  if (outcome.timed_out) {
    return fail(ErrorCode::timeout, fmt::format("a batch of {} commands timed out on {}", cmds.size(), where()));
  }
  auto parsed = parse_batch_output(outcome.out, cmds.size());
  if (!parsed) {
    spdlog::debug("ssh: batch exit {}, stderr: {}", outcome.exit_code, outcome.err);
  }
  return parsed;
}

Result<int> SshRunner::run_interactive(const std::vector<std::string>& argv)
{
  if (auto r = connect(); !r) {
    return std::unexpected(r.error());
  }
  ++m_round_trips;
  ssh_session session = m_impl->session;
  ssh_channel channel = ssh_channel_new(session);
  if (!channel) {
    return fail(ErrorCode::unreachable, "ssh: cannot open a channel");
  }
  const bool tty = ::isatty(0) != 0;
  winsize ws{};
  if (tty) {
    ::ioctl(0, TIOCGWINSZ, &ws);
  }
  const char* term = std::getenv("TERM");
  auto cleanup = [&] {
    ssh_channel_close(channel);
    ssh_channel_free(channel);
  };
  if (ssh_channel_open_session(channel) != SSH_OK ||
      (tty && ssh_channel_request_pty_size(channel, term ? term : "xterm", ws.ws_col ? ws.ws_col : 80,
                                           ws.ws_row ? ws.ws_row : 24) != SSH_OK) ||
      ssh_channel_request_exec(channel, login_shell_command(argv).c_str()) != SSH_OK) {
    std::string why = ssh_get_error(session);
    cleanup();
    return fail(ErrorCode::unreachable, "ssh: cannot start the interactive command: " + why);
  }
  // Raw mode: keystrokes (Ctrl-C included) go to the remote side, which has the PTY.
  termios saved{};
  if (tty) {
    ::tcgetattr(0, &saved);
    termios raw = saved;
    ::cfmakeraw(&raw);
    ::tcsetattr(0, TCSANOW, &raw);
  }
  char buf[16384];
  bool stdin_open = true;
  while (!ssh_channel_is_eof(channel) && !ssh_channel_is_closed(channel)) {
    for (int is_stderr = 0; is_stderr < 2; ++is_stderr) {
      int n = ssh_channel_read_nonblocking(channel, buf, sizeof buf, is_stderr);
      if (n > 0) {
        [[maybe_unused]] auto w = ::write(is_stderr ? 2 : 1, buf, static_cast<std::size_t>(n));
      }
    }
    pollfd pfd{0, POLLIN, 0};
    if (stdin_open && ::poll(&pfd, 1, 20) > 0) {
      auto n = ::read(0, buf, sizeof buf);
      if (n > 0) {
        ssh_channel_write(channel, buf, static_cast<uint32_t>(n));
      } else {
        stdin_open = false;
        ssh_channel_send_eof(channel);
      }
    } else if (!stdin_open) {
      ssh_channel_poll_timeout(channel, 20, 0);
    }
  }
  if (tty) {
    ::tcsetattr(0, TCSANOW, &saved);
  }
  int status = ssh_channel_get_exit_status(channel);
  cleanup();
  return status < 0 ? 255 : status;
}

std::string SshRunner::user()
{
  if (!connect()) {
    return {};
  }
  return m_impl->remote_user;
}

std::string SshRunner::where() const
{
  return "ssh " + (m_impl->label.empty() ? m_impl->options.destination : m_impl->label);
}

namespace {

// The SFTP session of `impl`'s connection, opened once.
Result<sftp_session> open_sftp(ssh_session session, sftp_session& sftp, const std::string& label)
{
  if (sftp) {
    return sftp;
  }
  sftp = sftp_new(session);
  if (!sftp || sftp_init(sftp) != SSH_OK) {
    std::string why = ssh_get_error(session);
    if (sftp) {
      sftp_free(sftp);
      sftp = nullptr;
    }
    return fail(ErrorCode::unreachable, fmt::format("ssh {}: cannot start SFTP: {}", label, why),
                "the server may not offer the sftp subsystem; install rsync on both sides instead");
  }
  return sftp;
}

std::string sftp_why(sftp_session sftp, ssh_session session)
{
  switch (sftp_get_error(sftp)) {
  case SSH_FX_NO_SUCH_FILE:
    return "no such file or directory";
  case SSH_FX_PERMISSION_DENIED:
    return "permission denied";
  default:
    return ssh_get_error(session);
  }
}

} // namespace

Result<std::uint64_t> SshRunner::put_file(const std::string& local_path, const std::string& remote_path,
                                          const FileMeta& meta)
{
  if (auto r = connect(); !r) {
    return std::unexpected(r.error());
  }
  RV_TRY(sftp, open_sftp(m_impl->session, m_impl->sftp, m_impl->label));
  const int fd = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return fail(ErrorCode::io, fmt::format("cannot read {}: {}", local_path, std::strerror(errno)));
  }
  const std::string tmp = remote_path + ".rv-tmp";
  sftp_file file = sftp_open(sftp, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, static_cast<mode_t>(meta.mode & 07777));
  if (!file) {
    ::close(fd);
    return fail(ErrorCode::io, fmt::format("cannot write {} on {}: {}", tmp, where(), sftp_why(sftp, m_impl->session)));
  }
  std::uint64_t sent = 0;
  char buf[32768];
  bool ok = true;
  while (true) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    if (sftp_write(file, buf, static_cast<std::size_t>(n)) != n) {
      ok = false;
      break;
    }
    sent += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  sftp_close(file);
  timeval times[2] = {{static_cast<time_t>(meta.mtime_s), 0}, {static_cast<time_t>(meta.mtime_s), 0}};
  if (!ok || sftp_chmod(sftp, tmp.c_str(), static_cast<mode_t>(meta.mode & 07777)) != 0 ||
      sftp_utimes(sftp, tmp.c_str(), times) != 0) {
    auto why = sftp_why(sftp, m_impl->session);
    sftp_unlink(sftp, tmp.c_str());
    return fail(ErrorCode::io, fmt::format("cannot send {} to {}: {}", local_path, remote_path, why));
  }
  // OpenSSH's server refuses to rename over an existing file: unlink first (a snapshot's hard
  // link keeps the old content either way).
  sftp_unlink(sftp, remote_path.c_str());
  if (sftp_rename(sftp, tmp.c_str(), remote_path.c_str()) != 0) {
    auto why = sftp_why(sftp, m_impl->session);
    sftp_unlink(sftp, tmp.c_str());
    return fail(ErrorCode::io, fmt::format("cannot rename {} to {}: {}", tmp, remote_path, why));
  }
  ++m_round_trips;
  return sent;
}

Result<void> SshRunner::put_symlink(const std::string& target, const std::string& remote_path)
{
  if (auto r = connect(); !r) {
    return std::unexpected(r.error());
  }
  RV_TRY(sftp, open_sftp(m_impl->session, m_impl->sftp, m_impl->label));
  sftp_unlink(sftp, remote_path.c_str());
  if (sftp_symlink(sftp, target.c_str(), remote_path.c_str()) != 0) {
    return fail(ErrorCode::io, fmt::format("cannot create the symlink {} on {}: {}", remote_path, where(),
                                           sftp_why(sftp, m_impl->session)));
  }
  return {};
}

Result<std::uint64_t> SshRunner::get_file(const std::string& remote_path, const std::string& local_path)
{
  if (auto r = connect(); !r) {
    return std::unexpected(r.error());
  }
  RV_TRY(sftp, open_sftp(m_impl->session, m_impl->sftp, m_impl->label));
  sftp_attributes attrs = sftp_stat(sftp, remote_path.c_str());
  if (!attrs) {
    return fail(ErrorCode::io,
                fmt::format("cannot read {} on {}: {}", remote_path, where(), sftp_why(sftp, m_impl->session)));
  }
  const auto mode = static_cast<mode_t>(attrs->permissions & 07777);
  const timespec times[2] = {{static_cast<time_t>(attrs->mtime), 0}, {static_cast<time_t>(attrs->mtime), 0}};
  sftp_attributes_free(attrs);
  sftp_file file = sftp_open(sftp, remote_path.c_str(), O_RDONLY, 0);
  if (!file) {
    return fail(ErrorCode::io,
                fmt::format("cannot read {} on {}: {}", remote_path, where(), sftp_why(sftp, m_impl->session)));
  }
  const std::string tmp = local_path + ".rv-tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode | S_IWUSR | S_IRUSR);
  if (fd < 0) {
    sftp_close(file);
    return fail(ErrorCode::io, fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  }
  std::uint64_t got = 0;
  char buf[32768];
  bool ok = true;
  while (true) {
    auto n = sftp_read(file, buf, sizeof buf);
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    if (::write(fd, buf, static_cast<std::size_t>(n)) != n) {
      ok = false;
      break;
    }
    got += static_cast<std::uint64_t>(n);
  }
  sftp_close(file);
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::utimensat(AT_FDCWD, tmp.c_str(), times, 0) != 0 || ::rename(tmp.c_str(), local_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return fail(ErrorCode::io, fmt::format("cannot fetch {} to {}", remote_path, local_path));
  }
  ++m_round_trips;
  return got;
}

} // namespace rv::proc
