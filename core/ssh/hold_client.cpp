#include "core/ssh/hold_client.hpp"

#include "core/interrupt.hpp"
#include "core/platform/platform.hpp"
#include "core/ssh/failures.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

namespace rv::proc::hold {
namespace {

using SteadyClock = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr const char* k_gone = "the held connection's process is gone";

Error gone(std::string_view path, std::string_view why)
{
  return Error{ErrorCode::unreachable, fmt::format("{} ({}: {})", k_gone, path, why), ""};
}

// One socket connection to the holder: frames out, frames in.
class Conn {
public:
  explicit Conn(int fd) : m_fd(fd) {}
  ~Conn() { ::close(m_fd); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  int fd() const { return m_fd; }
  bool send(Frame type, std::string_view payload) { return send_frame(m_fd, type, payload); }
  // The next frame, waiting at most `timeout_ms` (-1: no limit): nullopt on timeout; an error
  // once the holder closed the socket or sent garbage.
  Result<std::optional<Decoded>> next(int timeout_ms)
  {
    while (true) {
      RV_TRY(frame, decode(m_inbox));
      if (frame) {
        return frame;
      }
      pollfd p{m_fd, POLLIN, 0};
      const int r = ::poll(&p, 1, timeout_ms);
      if (r == 0) {
        return std::optional<Decoded>{};
      }
      if (r < 0) {
        if (errno == EINTR) {
          return std::optional<Decoded>{};
        }
        return std::unexpected(Error{ErrorCode::io, fmt::format("poll: {}", std::strerror(errno)), ""});
      }
      char buf[65536];
      auto n = ::recv(m_fd, buf, sizeof buf, 0);
      if (n <= 0) {
        return std::unexpected(Error{ErrorCode::unreachable, "closed", ""});
      }
      m_inbox.append(buf, static_cast<std::size_t>(n));
    }
  }

private:
  int m_fd;
  std::string m_inbox;
};

int signal_of(const json& end)
{
  return signal_number(end.value("signal", ""));
}

// A forward's stream over the socket: `out` frames are the bytes, `end` is EOF.
class SocketStream final : public Stream {
public:
  explicit SocketStream(int fd) : m_conn(fd) {}
  // Sends the request and waits for the channel (the login node connects to the port first).
  Result<void> open(const json& request, const std::string& path)
  {
    if (!m_conn.send(Frame::request, request.dump())) {
      return std::unexpected(gone(path, "cannot send"));
    }
    while (true) {
      auto frame = m_conn.next(-1);
      if (!frame) {
        return std::unexpected(gone(path, frame.error().message));
      }
      if (!*frame) {
        continue;
      }
      if ((*frame)->type == Frame::started) {
        return {};
      }
      if ((*frame)->type == Frame::not_sent) {
        return std::unexpected(gone(path, (*frame)->payload));
      }
      if ((*frame)->type == Frame::error) {
        return std::unexpected(error_from_payload((*frame)->payload));
      }
      return fail(ErrorCode::io, "held connection: an unexpected frame");
    }
  }
  long read_some(char* buf, std::size_t size) override
  {
    if (m_pending.empty()) {
      if (m_eof) {
        return -1;
      }
      auto frame = m_conn.next(0);
      if (!frame) {
        return -1;
      }
      if (!*frame) {
        return 0;
      }
      if ((*frame)->type == Frame::out) {
        m_pending = std::move((*frame)->payload);
      } else if ((*frame)->type != Frame::started) {
        m_eof = true;
        return -1;
      }
    }
    const auto n = std::min(size, m_pending.size());
    std::memcpy(buf, m_pending.data(), n);
    m_pending.erase(0, n);
    return static_cast<long>(n);
  }
  long write_some(const char* data, std::size_t size) override
  {
    return m_conn.send(Frame::input, std::string_view(data, size)) ? static_cast<long>(size) : -1;
  }
  void close_write() override { m_conn.send(Frame::input_end, ""); }
  int poll_fd() const override { return m_conn.fd(); }
  bool buffered() const override { return !m_pending.empty(); }

private:
  Conn m_conn;
  std::string m_pending;
  bool m_eof = false;
};

std::string absolute(const std::string& path)
{
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

} // namespace

bool gone_before_start(const Error& e)
{
  return e.message.starts_with(k_gone);
}

bool may_ask_again(const Error& e, bool repeatable)
{
  return gone_before_start(e) || (repeatable && is_answer_lost(e));
}

Result<int> dial_unix(const std::string& path)
{
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return fail(ErrorCode::io, fmt::format("socket path too long: {}", path));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = platform::cloexec_socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    return fail(ErrorCode::io, fmt::format("socket: {}", std::strerror(errno)));
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    return std::unexpected(gone(path, std::strerror(err)));
  }
  return fd;
}

Result<int> Client::dial()
{
  return dial_unix(m_path);
}

Error Client::lost(std::string_view why) const
{
  spdlog::debug("held connection {}: no answer after the request was sent ({})", m_path, why);
  return answer_lost(m_label.empty() ? std::filesystem::path(m_path).filename().string() : m_label);
}

Result<json> Client::hello(const std::string& op)
{
  RV_TRY(fd, dial());
  Conn conn(fd);
  if (!conn.send(Frame::request, json{{"op", op}}.dump())) {
    return std::unexpected(gone(m_path, "cannot send"));
  }
  // A live holder answers at once; a stopped or hung one must not hang the command.
  RV_TRY(frame, conn.next(2000));
  if (!frame || frame->type != Frame::reply) {
    return std::unexpected(gone(m_path, "no answer"));
  }
  auto j = json::parse(frame->payload, nullptr, false);
  if (!j.is_object()) {
    return std::unexpected(gone(m_path, "an unreadable answer"));
  }
  return j;
}

Result<Outcome> Client::exec(const std::string& line, const std::string& input, const Command& cmd)
{
  const auto start = SteadyClock::now();
  RV_TRY(fd, dial());
  Conn conn(fd);
  // A request frame not wholly sent is never read (the holder takes complete frames only).
  if (!conn.send(Frame::request, json{{"op", "exec"}, {"line", line}}.dump())) {
    return std::unexpected(gone(m_path, "cannot send"));
  }
  // From here the holder may have sent the command to the server: a failure is "may have run"
  // unless the holder says `not_sent` (docs/ssh.md, "Never run twice"). A send that fails means the
  // holder closed the socket: its last frames are still read below.
  bool sent = true;
  for (std::size_t at = 0; sent && at < input.size(); at += 1u << 20) {
    sent = conn.send(Frame::input, std::string_view(input).substr(at, 1u << 20));
  }
  if (sent) {
    conn.send(Frame::input_end, "");
  }
  Outcome outcome;
  while (true) {
    const bool over_time = cmd.timeout.count() > 0 && SteadyClock::now() - start >= cmd.timeout;
    if (over_time || (!cmd.uninterruptible && interrupt_signal() != 0)) {
      // Closing the socket makes the holder send the command SIGTERM and close its channel.
      outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
      if (!over_time) {
        return fail(ErrorCode::interrupted, "interrupted while running a command");
      }
      outcome.timed_out = true;
      return outcome;
    }
    auto frame = conn.next(50);
    if (!frame) {
      return std::unexpected(lost(frame.error().message)); // its process died or its session dropped
    }
    if (!*frame) {
      continue;
    }
    auto& [type, payload] = **frame;
    switch (type) {
    case Frame::started:
      break;
    case Frame::not_sent:
      return std::unexpected(gone(m_path, payload));
    case Frame::out:
    case Frame::err: {
      const bool is_err = type == Frame::err;
      (is_err ? outcome.err : outcome.out).append(payload);
      const auto& sink = is_err ? cmd.on_stderr : cmd.on_stdout;
      if (sink) {
        sink(payload);
      }
      break;
    }
    case Frame::end: {
      auto end = json::parse(payload, nullptr, false);
      outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
      outcome.signal = end.is_object() ? signal_of(end) : 0;
      outcome.exit_code = outcome.signal != 0 ? -1 : (end.is_object() ? end.value("exit", -1) : -1);
      return outcome;
    }
    case Frame::error:
      return std::unexpected(error_from_payload(payload));
    default:
      return fail(ErrorCode::io, "held connection: an unexpected frame");
    }
  }
}

Result<int> Client::relay(const std::string& line, bool pty)
{
  const bool tty = pty && ::isatty(0) != 0;
  winsize ws{};
  if (tty) {
    ::ioctl(0, TIOCGWINSZ, &ws);
  }
  const char* term = std::getenv("TERM");
  json request{{"op", tty ? "pty" : "exec"},
               {"line", line},
               {"term", term ? term : "xterm"},
               {"cols", ws.ws_col ? ws.ws_col : 80},
               {"rows", ws.ws_row ? ws.ws_row : 24}};
  RV_TRY(fd, dial());
  Conn conn(fd);
  if (!conn.send(Frame::request, request.dump())) {
    return std::unexpected(gone(m_path, "cannot send"));
  }
  termios saved{};
  if (tty) {
    ::tcgetattr(0, &saved);
    termios raw = saved;
    ::cfmakeraw(&raw);
    ::tcsetattr(0, TCSANOW, &raw);
  }
  auto restore = [&] {
    if (tty) {
      ::tcsetattr(0, TCSANOW, &saved);
    }
  };
  bool stdin_open = true;
  bool started = false;
  char buf[16384];
  // Stdin goes out non-blocking, while the holder's output is read on every turn: a client
  // blocked sending its stdin while the holder sends it stdout deadlocked both (rsync through
  // the relay, security-review-3 S3). At most 1 MiB waits here; stdin is read only below that.
  std::string outbox;
  while (true) {
    const bool room = outbox.size() < (1u << 20);
    pollfd pfds[2] = {{conn.fd(), static_cast<short>(POLLIN | (outbox.empty() ? 0 : POLLOUT)), 0},
                      {stdin_open && room ? 0 : -1, POLLIN, 0}};
    ::poll(pfds, 2, 200);
    if (pfds[1].revents & (POLLIN | POLLHUP)) {
      auto n = ::read(0, buf, sizeof buf);
      if (n > 0) {
        outbox += encode(Frame::input, std::string_view(buf, static_cast<std::size_t>(n)));
      } else {
        stdin_open = false;
        outbox += encode(Frame::input_end, "");
      }
    }
    while (!outbox.empty()) { // a holder that is gone is noticed by the read below
      auto n = platform::send_nosignal(conn.fd(), outbox.data(), outbox.size(), MSG_DONTWAIT);
      if (n > 0) {
        outbox.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        break;
      }
    }
    if (!(pfds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      continue;
    }
    auto frame = conn.next(0);
    if (!frame) {
      restore();
      if (!started) {
        return std::unexpected(lost(frame.error().message));
      }
      return fail(ErrorCode::unreachable, "the held connection ended during the interactive command");
    }
    while (frame && *frame) {
      auto& [type, payload] = **frame;
      if (type == Frame::started) {
        started = true;
      } else if (type == Frame::not_sent) {
        restore();
        return std::unexpected(gone(m_path, payload));
      } else if (type == Frame::out || type == Frame::err) {
        [[maybe_unused]] auto w = ::write(type == Frame::err ? 2 : 1, payload.data(), payload.size());
      } else if (type == Frame::end) {
        restore();
        auto end = json::parse(payload, nullptr, false);
        const int status = end.is_object() ? end.value("exit", -1) : -1;
        return status < 0 ? 255 : status;
      } else if (type == Frame::error) {
        restore();
        return std::unexpected(error_from_payload(payload));
      }
      frame = conn.next(0);
    }
  }
}

Result<std::unique_ptr<Stream>> Client::forward(const std::string& host, int port)
{
  RV_TRY(fd, dial());
  auto stream = std::make_unique<SocketStream>(fd);
  RV_TRY_VOID(stream->open(json{{"op", "forward"}, {"host", host}, {"port", port}}, m_path));
  return std::unique_ptr<Stream>(std::move(stream));
}

Result<json> Client::file_op(const json& request)
{
  RV_TRY(fd, dial());
  Conn conn(fd);
  if (!conn.send(Frame::request, request.dump())) {
    return std::unexpected(gone(m_path, "cannot send"));
  }
  while (true) {
    auto frame = conn.next(-1);
    if (!frame) {
      return fail(ErrorCode::unreachable, "the held connection ended during a file transfer",
                  "run the command again: rv starts a new held connection");
    }
    if (!*frame) {
      continue;
    }
    if ((*frame)->type == Frame::not_sent) {
      return std::unexpected(gone(m_path, (*frame)->payload));
    }
    if ((*frame)->type == Frame::error) {
      return std::unexpected(error_from_payload((*frame)->payload));
    }
    auto j = json::parse((*frame)->payload, nullptr, false);
    return j.is_object() ? j : json::object();
  }
}

Result<std::uint64_t> Client::put_file(const std::string& local_path, const std::string& remote_path,
                                       const FileMeta& meta)
{
  RV_TRY(r, file_op(json{{"op", "put"},
                         {"local", absolute(local_path)},
                         {"remote", remote_path},
                         {"mode", meta.mode},
                         {"mtime", meta.mtime_s}}));
  return r.value("bytes", std::uint64_t{0});
}

Result<void> Client::put_symlink(const std::string& target, const std::string& remote_path)
{
  RV_TRY(r, file_op(json{{"op", "link"}, {"target", target}, {"remote", remote_path}}));
  (void)r;
  return {};
}

Result<std::uint64_t> Client::get_file(const std::string& remote_path, const std::string& local_path)
{
  RV_TRY(r, file_op(json{{"op", "get"}, {"remote", remote_path}, {"local", absolute(local_path)}}));
  return r.value("bytes", std::uint64_t{0});
}

} // namespace rv::proc::hold
