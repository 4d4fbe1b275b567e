#include "core/ssh/exec.hpp"

#include "core/interrupt.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/session.hpp"

#include <libssh/callbacks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace rv::proc::ssh {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::chrono::milliseconds since(SteadyClock::time_point start)
{
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
}

// A new channel on `session` with a session opened on it, or the failure.
Result<ChannelPtr> open_channel(Session& session)
{
  ChannelPtr channel(ssh_channel_new(session.get()));
  if (!channel || ssh_channel_open_session(channel.get()) != SSH_OK) {
    return std::unexpected(session.failure(ErrorCode::unreachable, "cannot open a channel"));
  }
  return channel;
}

// The local terminal in raw mode while it lives (keystrokes, Ctrl-C included, go to the remote
// PTY); restored on every way out.
class RawTerminal {
public:
  explicit RawTerminal(bool tty) : m_tty(tty)
  {
    if (m_tty) {
      ::tcgetattr(0, &m_saved);
      termios raw = m_saved;
      ::cfmakeraw(&raw);
      ::tcsetattr(0, TCSANOW, &raw);
    }
  }
  ~RawTerminal()
  {
    if (m_tty) {
      ::tcsetattr(0, TCSANOW, &m_saved);
    }
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

private:
  bool m_tty;
  termios m_saved{};
};

} // namespace

Result<Outcome> exec_line(Session& session, const std::string& line, const std::string& input, const Command& cmd)
{
  const auto start = SteadyClock::now();
  // Declared before the channel, which refers to them until it is freed.
  std::string exit_signal;
  ssh_channel_callbacks_struct callbacks{};
  callbacks.userdata = &exit_signal;
  callbacks.channel_exit_signal_function = keep_exit_signal;
  ssh_callbacks_init(&callbacks);

  RV_TRY(channel, open_channel(session));
  ChannelHook hook; // after the channel: removed before it is freed, on every way out
  hook.set(channel.get(), &callbacks);
  if (ssh_channel_request_exec(channel.get(), line.c_str()) != SSH_OK) {
    return std::unexpected(session.failure(ErrorCode::unreachable, "cannot run command"));
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
        auto window = ssh_channel_window_size(channel.get());
        auto chunk = std::min<std::size_t>({input.size() - written, window, sizeof buf});
        if (chunk > 0) {
          int n = ssh_channel_write(channel.get(), input.data() + written, static_cast<uint32_t>(chunk));
          if (n == SSH_ERROR) {
            break;
          }
          written += static_cast<std::size_t>(n);
        }
      }
      if (written >= input.size()) {
        ssh_channel_send_eof(channel.get());
        eof_sent = true;
      }
    }
    bool got = false;
    for (int is_stderr = 0; is_stderr < 2; ++is_stderr) {
      int n = ssh_channel_read_nonblocking(channel.get(), buf, sizeof buf, is_stderr);
      if (n > 0) {
        got = true;
        std::string_view chunk(buf, static_cast<std::size_t>(n));
        (is_stderr ? outcome.err : outcome.out).append(chunk);
        const auto& sink = is_stderr ? cmd.on_stderr : cmd.on_stdout;
        if (sink) {
          sink(chunk);
        }
      } else if (n == SSH_ERROR) {
        return std::unexpected(session.failure(ErrorCode::unreachable, "connection lost"));
      }
    }
    if (!got && ssh_channel_is_eof(channel.get())) {
      break;
    }
    const bool over_time = cmd.timeout.count() > 0 && SteadyClock::now() - start >= cmd.timeout;
    if (!stopping && (over_time || (!cmd.uninterruptible && interrupt_signal() != 0))) {
      // Ask the remote side to stop the command; closing the channel ends the session's
      // processes' stdio, so they see EOF/SIGPIPE even where sshd ignores signal requests.
      outcome.timed_out = over_time;
      ssh_channel_request_send_signal(channel.get(), "TERM");
      stopping = true;
      break;
    }
    if (!got) {
      ssh_channel_poll_timeout(channel.get(), 50, 0);
    }
  }
  const int status = stopping ? -1 : ssh_channel_get_exit_status(channel.get());
  hook.remove();
  channel.reset();
  outcome.elapsed = since(start);
  if (stopping) {
    if (!outcome.timed_out) {
      return std::unexpected(
          ssh_failure(ErrorCode::interrupted, session.label(), "interrupted while running a command"));
    }
    return outcome;
  }
  if (!exit_signal.empty()) {
    outcome.signal = signal_number(exit_signal);
    outcome.exit_code = -1;
  } else {
    outcome.exit_code = status;
  }
  spdlog::debug("ssh: {} -> exit {} in {} ms", session.label(), outcome.exit_code, outcome.elapsed.count());
  return outcome;
}

Command batch_envelope(const std::vector<Command>& cmds)
{
  Command whole;
  whole.timeout = std::chrono::milliseconds(0);
  whole.uninterruptible = std::all_of(cmds.begin(), cmds.end(), [](const Command& c) { return c.uninterruptible; });
  for (const auto& c : cmds) {
    if (c.timeout.count() > 0) {
      whole.timeout += c.timeout + std::chrono::seconds(5);
    }
  }
  return whole;
}

Result<int> exec_interactive(Session& session, const std::string& line)
{
  const bool tty = ::isatty(0) != 0;
  winsize ws{};
  if (tty) {
    ::ioctl(0, TIOCGWINSZ, &ws);
  }
  const char* term = std::getenv("TERM");
  RV_TRY(channel, open_channel(session));
  if ((tty && ssh_channel_request_pty_size(channel.get(), term ? term : "xterm", ws.ws_col ? ws.ws_col : 80,
                                           ws.ws_row ? ws.ws_row : 24) != SSH_OK) ||
      ssh_channel_request_exec(channel.get(), line.c_str()) != SSH_OK) {
    return std::unexpected(session.failure(ErrorCode::unreachable, "cannot start the interactive command"));
  }
  char buf[16384];
  bool stdin_open = true;
  {
    RawTerminal raw(tty);
    while (!ssh_channel_is_eof(channel.get()) && !ssh_channel_is_closed(channel.get())) {
      for (int is_stderr = 0; is_stderr < 2; ++is_stderr) {
        int n = ssh_channel_read_nonblocking(channel.get(), buf, sizeof buf, is_stderr);
        if (n > 0) {
          [[maybe_unused]] auto w = ::write(is_stderr ? 2 : 1, buf, static_cast<std::size_t>(n));
        }
      }
      pollfd pfd{0, POLLIN, 0};
      if (stdin_open && ::poll(&pfd, 1, 20) > 0) {
        auto n = ::read(0, buf, sizeof buf);
        if (n > 0) {
          ssh_channel_write(channel.get(), buf, static_cast<uint32_t>(n));
        } else {
          stdin_open = false;
          ssh_channel_send_eof(channel.get());
        }
      } else if (!stdin_open) {
        ssh_channel_poll_timeout(channel.get(), 20, 0);
      }
    }
  }
  const int status = ssh_channel_get_exit_status(channel.get());
  return status < 0 ? 255 : status;
}

} // namespace rv::proc::ssh
