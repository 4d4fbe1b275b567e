#include "core/platform/platform.hpp"
#include "core/ssh/stream.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rv::proc {
namespace {

void set_nonblocking(int fd)
{
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

class TcpStream final : public Stream {
public:
  explicit TcpStream(int fd) : m_fd(fd) {}
  ~TcpStream() override { ::close(m_fd); }
  TcpStream(const TcpStream&) = delete;
  TcpStream& operator=(const TcpStream&) = delete;

  long read_some(char* buf, std::size_t size) override
  {
    auto n = ::recv(m_fd, buf, size, 0);
    if (n > 0) {
      return n;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
  }
  long write_some(const char* data, std::size_t size) override
  {
    auto n = platform::send_nosignal(m_fd, data, size, 0);
    if (n >= 0) {
      return n;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
  }
  void close_write() override { ::shutdown(m_fd, SHUT_WR); }
  int poll_fd() const override { return m_fd; }

private:
  int m_fd;
};

// Connects `fd` to `addr` within `timeout_ms`; errno-style failure text, or "".
std::string connect_within(int fd, const addrinfo& addr, int timeout_ms)
{
  set_nonblocking(fd);
  if (::connect(fd, addr.ai_addr, addr.ai_addrlen) == 0) {
    return {};
  }
  if (errno != EINPROGRESS) {
    return std::strerror(errno);
  }
  pollfd pfd{fd, POLLOUT, 0};
  int ready = ::poll(&pfd, 1, timeout_ms);
  if (ready <= 0) {
    return ready == 0 ? "timed out" : std::strerror(errno);
  }
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err == 0 ? std::string() : std::strerror(err);
}

} // namespace

Result<std::unique_ptr<Stream>> connect_tcp(const std::string& host, int port, int timeout_ms)
{
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const auto service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return fail(ErrorCode::unreachable, fmt::format("cannot resolve {}: {}", host, ::gai_strerror(rc)));
  }
  std::string why = "no address";
  for (auto* a = found; a != nullptr; a = a->ai_next) {
    int fd = platform::cloexec_socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    why = connect_within(fd, *a, timeout_ms);
    if (why.empty()) {
      ::freeaddrinfo(found);
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return std::unique_ptr<Stream>(std::make_unique<TcpStream>(fd));
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return fail(ErrorCode::unreachable, fmt::format("cannot connect to {}:{}: {}", host, port, why));
}

Result<std::unique_ptr<Stream>> TcpOpener::open_stream(const std::string& host, int port)
{
  return connect_tcp(host, port);
}

Result<int> listen_local(int port)
{
  int fd = platform::cloexec_socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    return fail(ErrorCode::io, fmt::format("cannot create a socket: {}", std::strerror(errno)));
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    auto why = std::strerror(errno);
    ::close(fd);
    // The user's choice of port (in use, or privileged): a usage error.
    return fail(ErrorCode::usage, fmt::format("cannot listen on 127.0.0.1:{}: {}", port, why),
                "choose another one with --local-port");
  }
  set_nonblocking(fd);
  return fd;
}

int bound_port(int fd)
{
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

} // namespace rv::proc
