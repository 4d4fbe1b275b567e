#pragma once
// A byte stream to HOST:PORT as seen from where a Runner runs commands: a direct-tcpip channel
// through the login node over SSH, a plain TCP connection locally. `rv forward` pumps bytes
// between a local socket and one of these (core/ssh/forward.hpp).

#include "core/result.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace rv::proc {

class Stream {
public:
  virtual ~Stream() = default;
  // Reads what has arrived, without blocking: the bytes read, 0 when nothing is there yet, -1 once
  // the other side has closed (EOF) or the stream failed.
  virtual long read_some(char* buf, std::size_t size) = 0;
  // Writes as much of `data` as fits now, without blocking: the bytes taken (maybe 0), -1 on failure.
  virtual long write_some(const char* data, std::size_t size) = 0;
  // Tells the other side nothing more will be written (half-close).
  virtual void close_write() = 0;
  // A descriptor that becomes readable when data may have arrived (-1 = none: poll by time).
  virtual int poll_fd() const = 0;
  // Whether bytes may already be waiting without `poll_fd` saying so (libssh buffers other
  // channels' data while it reads one): the pump then polls with a short timeout.
  virtual bool buffered() const { return false; }
};

// Opens streams to HOST:PORT from where a runner runs commands. SshRunner is one (direct-tcpip
// channels on its session); TcpOpener is the one for rv on the login node itself.
class StreamOpener {
public:
  virtual ~StreamOpener() = default;
  // A stream to `host`:`port`, or why it could not be opened (refused, unreachable).
  virtual Result<std::unique_ptr<Stream>> open_stream(const std::string& host, int port) = 0;
};

// Plain TCP connections from this machine.
class TcpOpener final : public StreamOpener {
public:
  Result<std::unique_ptr<Stream>> open_stream(const std::string& host, int port) override;
};

// Connects to `host`:`port` over TCP from this machine (getaddrinfo, then a connect bounded by
// `timeout_ms`); the stream is non-blocking.
Result<std::unique_ptr<Stream>> connect_tcp(const std::string& host, int port, int timeout_ms = 10000);

// A listening TCP socket on 127.0.0.1:`port` (0 = any free port), non-blocking; its fd.
Result<int> listen_local(int port);

// The port a bound socket listens on.
int bound_port(int fd);

} // namespace rv::proc
