#include "core/ssh/forward.hpp"

#include "core/interrupt.hpp"
#include "core/platform/platform.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <list>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace rv::proc {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr std::size_t buffer_size = 64 * 1024;

// Bytes read from one side and not yet written to the other.
struct Pipe {
  std::array<char, buffer_size> data{};
  std::size_t begin = 0, end = 0;
  bool eof = false;    // the source has closed
  bool shut = false;   // the close was passed on
  long long moved = 0; // bytes written to the sink
  std::size_t room() const { return data.size() - end; }
  bool empty() const { return begin == end; }
  void consumed(std::size_t n)
  {
    begin += n;
    moved += static_cast<long long>(n);
    if (begin == end) {
      begin = end = 0;
    }
  }
};

struct Connection {
  long id = 0;
  int client = -1;
  std::unique_ptr<Stream> far;
  Pipe up;   // client -> far
  Pipe down; // far -> client
  bool failed = false;
  ~Connection()
  {
    if (client >= 0) {
      ::close(client);
    }
  }
  bool done() const { return failed || (up.shut && down.shut); }
};

// Moves what it can in both directions without blocking; whether anything moved.
bool pump(Connection& c)
{
  bool moved = false;
  // client -> far
  if (!c.up.eof && c.up.room() > 0) {
    auto n = ::recv(c.client, c.up.data.data() + c.up.end, c.up.room(), 0);
    if (n > 0) {
      c.up.end += static_cast<std::size_t>(n);
      moved = true;
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      c.up.eof = true;
    }
  }
  if (!c.up.empty()) {
    auto n = c.far->write_some(c.up.data.data() + c.up.begin, c.up.end - c.up.begin);
    if (n < 0) {
      c.failed = true;
      return true;
    }
    c.up.consumed(static_cast<std::size_t>(n));
    moved = moved || n > 0;
  }
  if (c.up.eof && c.up.empty() && !c.up.shut) {
    c.far->close_write();
    c.up.shut = true;
  }
  // far -> client
  if (!c.down.eof && c.down.room() > 0) {
    auto n = c.far->read_some(c.down.data.data() + c.down.end, c.down.room());
    if (n > 0) {
      c.down.end += static_cast<std::size_t>(n);
      moved = true;
    } else if (n < 0) {
      c.down.eof = true;
    }
  }
  if (!c.down.empty()) {
    auto n = platform::send_nosignal(c.client, c.down.data.data() + c.down.begin, c.down.end - c.down.begin, 0);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      c.failed = true;
      return true;
    }
    if (n > 0) {
      c.down.consumed(static_cast<std::size_t>(n));
      moved = true;
    }
  }
  if (c.down.eof && c.down.empty() && !c.down.shut) {
    ::shutdown(c.client, SHUT_WR);
    c.down.shut = true;
  }
  return moved;
}

} // namespace

Result<ForwardStats> run_forward(int listen_fd, const ForwardHooks& hooks)
{
  ForwardStats stats;
  std::list<Connection> conns;
  auto note = [&](const std::string& text) {
    if (hooks.note) {
      hooks.note(text);
    }
  };
  auto next_check = SteadyClock::now() + hooks.check_every;
  while (true) {
    if (interrupt_signal() != 0) {
      stats.interrupted = true;
      break;
    }
    if (SteadyClock::now() >= next_check) {
      if (hooks.keep_going && !hooks.keep_going()) {
        break;
      }
      next_check = SteadyClock::now() + hooks.check_every;
    }
    // Wait for the listener, a client, or a far end; briefly when libssh may hold bytes already.
    std::vector<pollfd> fds{{listen_fd, POLLIN, 0}};
    bool buffered = false;
    for (const auto& c : conns) {
      short ev = (!c.up.eof && c.up.room() > 0 ? POLLIN : 0) | (!c.down.empty() ? POLLOUT : 0);
      fds.push_back({c.client, ev, 0});
      if (int fd = c.far->poll_fd(); fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
      }
      buffered = buffered || c.far->buffered() || !c.up.empty();
    }
    const int wait_ms = buffered ? 10 : 200;
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
      return fail(ErrorCode::io, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (fds[0].revents & POLLIN) {
      while (true) {
        int client = platform::cloexec_accept(listen_fd, true);
        if (client < 0) {
          break;
        }
        ++stats.connections;
        if (conns.size() >= hooks.max_connections) {
          ++stats.turned_away;
          note(fmt::format("connection {}: refused: {} connections are open already (the most at once)",
                           stats.connections, conns.size()));
          ::close(client);
          continue;
        }
        auto far = hooks.open();
        if (!far) {
          ++stats.failed;
          note(fmt::format("connection {}: refused: {}", stats.connections, far.error().message));
          ::close(client);
          continue;
        }
        auto& c = conns.emplace_back();
        c.id = stats.connections;
        c.client = client;
        c.far = std::move(*far);
        note(fmt::format("connection {}: opened", c.id));
      }
    }
    // Pump every connection until nothing moves (bounded, so no connection starves the others).
    for (int round = 0; round < 8; ++round) {
      bool any = false;
      for (auto& c : conns) {
        any = pump(c) || any;
      }
      if (!any) {
        break;
      }
    }
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->done()) {
        stats.bytes_out += it->up.moved;
        stats.bytes_in += it->down.moved;
        note(fmt::format("connection {}: {} ({} bytes sent, {} received)", it->id, it->failed ? "broken" : "closed",
                         it->up.moved, it->down.moved));
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : conns) {
    stats.bytes_out += c.up.moved;
    stats.bytes_in += c.down.moved;
  }
  return stats;
}

} // namespace rv::proc
