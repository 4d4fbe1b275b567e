#include "core/ssh/forward.hpp"

#include "core/ssh/stream.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <atomic>
#include <cctype>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace rv;
using namespace rv::proc;

namespace {

// A blocking connection to 127.0.0.1:port, or -1.
int dial(int port)
{
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `data`, half-closes, reads until EOF.
std::string send_and_read(int port, const std::string& data)
{
  int fd = dial(port);
  if (fd < 0) {
    return "connect failed";
  }
  std::size_t sent = 0;
  while (sent < data.size()) {
    auto n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      break;
    }
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string got;
  char buf[8192];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {
    got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return got;
}

// An upper-casing echo server on its own thread: one thread per connection, until stopped.
struct EchoServer {
  int fd = -1;
  int port = 0;
  std::thread thread;
  std::vector<std::thread> workers;
  std::atomic<bool> stop{false};

  EchoServer()
  {
    auto l = listen_local(0);
    REQUIRE(l.has_value());
    fd = *l;
    port = bound_port(fd);
    thread = std::thread([this] {
      while (!stop) {
        int c = ::accept(fd, nullptr, nullptr);
        if (c < 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        workers.emplace_back([c] {
          int flags = 0;
          (void)flags;
          char buf[4096];
          while (true) {
            auto n = ::recv(c, buf, sizeof buf, 0);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
              continue;
            }
            if (n <= 0) {
              break;
            }
            for (ssize_t i = 0; i < n; ++i) {
              buf[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(buf[i])));
            }
            std::size_t sent = 0;
            while (sent < static_cast<std::size_t>(n)) {
              auto w = ::send(c, buf + sent, static_cast<std::size_t>(n) - sent, MSG_NOSIGNAL);
              if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
              }
              if (w <= 0) {
                break;
              }
              sent += static_cast<std::size_t>(w);
            }
          }
          ::close(c);
        });
      }
    });
  }
  ~EchoServer()
  {
    stop = true;
    thread.join();
    for (auto& w : workers) {
      w.join();
    }
    ::close(fd);
  }
};

} // namespace

TEST_CASE("run_forward: several connections at once through TCP streams, until keep_going says no")
{
  EchoServer server;
  auto listener = listen_local(0);
  REQUIRE(listener.has_value());
  const int port = bound_port(*listener);
  std::atomic<int> finished{0};
  std::vector<std::string> results(6);
  std::thread clients([&] {
    std::vector<std::thread> ts;
    for (std::size_t i = 0; i < results.size(); ++i) {
      ts.emplace_back([&, i] {
        // one large message (several buffers' worth) and small ones, all at the same time
        std::string msg = i == 0 ? std::string(300000, 'x') : "hello " + std::to_string(i);
        results[i] = send_and_read(port, msg);
        ++finished;
      });
    }
    for (auto& t : ts) {
      t.join();
    }
  });
  TcpOpener tcp;
  ForwardHooks hooks;
  hooks.open = [&] { return tcp.open_stream("127.0.0.1", server.port); };
  hooks.check_every = std::chrono::milliseconds(20);
  hooks.keep_going = [&] { return finished < static_cast<int>(results.size()); };
  std::vector<std::string> notes;
  hooks.note = [&](std::string_view n) { notes.emplace_back(n); };
  auto stats = run_forward(*listener, hooks);
  clients.join();
  ::close(*listener);
  REQUIRE(stats.has_value());
  CHECK(stats->connections == 6);
  CHECK(stats->failed == 0);
  CHECK_FALSE(stats->interrupted);
  CHECK(results[0] == std::string(300000, 'X'));
  for (std::size_t i = 1; i < results.size(); ++i) {
    CHECK(results[i] == "HELLO " + std::to_string(i));
  }
  CHECK(stats->bytes_out == 300000 + 5 * 7);
  CHECK(stats->bytes_in == stats->bytes_out);
}

TEST_CASE("run_forward: a far end that cannot be opened closes the client and is counted")
{
  auto listener = listen_local(0);
  REQUIRE(listener.has_value());
  const int port = bound_port(*listener);
  std::atomic<bool> done{false};
  std::string got;
  std::thread client([&] {
    got = send_and_read(port, "ping");
    done = true;
  });
  ForwardHooks hooks;
  hooks.open = []() -> Result<std::unique_ptr<Stream>> {
    return fail(ErrorCode::unreachable, "cannot connect to node:1: Connection refused");
  };
  hooks.check_every = std::chrono::milliseconds(20);
  hooks.keep_going = [&] { return !done; };
  std::vector<std::string> notes;
  hooks.note = [&](std::string_view n) { notes.emplace_back(n); };
  auto stats = run_forward(*listener, hooks);
  client.join();
  ::close(*listener);
  REQUIRE(stats.has_value());
  CHECK(stats->connections == 1);
  CHECK(stats->failed == 1);
  CHECK(got.empty());
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "connection 1: refused: cannot connect to node:1: Connection refused");
}

TEST_CASE("listen_local: a port in use is an error with a hint")
{
  auto a = listen_local(0);
  REQUIRE(a.has_value());
  auto b = listen_local(bound_port(*a));
  REQUIRE_FALSE(b.has_value());
  CHECK(b.error().message.find("cannot listen on 127.0.0.1:") == 0);
  CHECK(b.error().hint.find("--local-port") != std::string::npos);
  ::close(*a);
}

TEST_CASE("connect_tcp: a closed port is refused")
{
  auto a = listen_local(0);
  REQUIRE(a.has_value());
  const int port = bound_port(*a);
  ::close(*a);
  auto s = connect_tcp("127.0.0.1", port, 2000);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().message.find("cannot connect to 127.0.0.1:") == 0);
}

// N14: any local user can connect to a forward; each connection costs buffers and a channel.
TEST_CASE("run_forward: connections past max_connections are closed at once, never opened far")
{
  EchoServer server;
  auto listener = listen_local(0);
  REQUIRE(listener.has_value());
  const int port = bound_port(*listener);
  // Two clients hold their connections open; the third is turned away.
  int a = dial(port);
  int b = dial(port);
  REQUIRE(a >= 0);
  REQUIRE(b >= 0);
  TcpOpener tcp;
  int opened = 0;
  ForwardHooks hooks;
  hooks.max_connections = 2;
  hooks.open = [&] {
    ++opened;
    return tcp.open_stream("127.0.0.1", server.port);
  };
  hooks.check_every = std::chrono::milliseconds(20);
  std::atomic<bool> done{false};
  std::string third;
  std::thread client([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // after the first two are accepted
    third = send_and_read(port, "ping");
    done = true;
  });
  hooks.keep_going = [&] { return !done; };
  auto stats = run_forward(*listener, hooks);
  client.join();
  ::close(a);
  ::close(b);
  ::close(*listener);
  REQUIRE(stats.has_value());
  CHECK(stats->connections == 3);
  CHECK(stats->turned_away == 1);
  CHECK(opened == 2);
  CHECK(third.empty());
}
