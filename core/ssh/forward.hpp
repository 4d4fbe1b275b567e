#pragma once
// The forward loop of `rv forward`: accepts connections on a local listening socket and pumps
// each one's bytes to and from its own Stream (a direct-tcpip channel or a TCP connection), many
// at once, in one thread: a poll loop over the listener, the clients and the streams, nothing
// blocking.

#include "core/ssh/stream.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace rv::proc {

struct ForwardHooks {
  // Opens the far end for a new connection.
  std::function<Result<std::unique_ptr<Stream>>()> open;
  // Called about every `check_every`: false ends the loop (the job ended). Runs between pumps.
  std::function<bool()> keep_going;
  std::chrono::milliseconds check_every{5000};
  // Told what happened to each connection (opened, closed with byte counts, refused), for the log.
  std::function<void(std::string_view)> note;
  // At most this many connections at once (each costs two 128 KiB buffers and a channel); more are
  // accepted and closed at once, never queued (N14: any local user can connect).
  std::size_t max_connections = 64;
};

struct ForwardStats {
  long connections = 0; // accepted
  long failed = 0;      // the far end could not be opened
  long turned_away = 0; // closed at once: max_connections were open
  long long bytes_in = 0, bytes_out = 0;
  bool interrupted = false; // ended by SIGINT/SIGTERM rather than by keep_going
};

// Runs until keep_going says false or an interrupt arrives; closes every connection then. The
// listening socket stays the caller's.
Result<ForwardStats> run_forward(int listen_fd, const ForwardHooks& hooks);

} // namespace rv::proc
