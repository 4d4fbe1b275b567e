#pragma once
// The held connection's wire format and where its socket lives (docs/ssh.md, "One held
// connection"). Pure parts, unit-tested; the holder (ssh_hold_server) and its clients
// (ssh_hold_client) speak it over a Unix socket, one socket connection per channel.
//
// Every message is a frame: one type byte, a 4-byte big-endian length, the payload. A client
// sends `request` first (JSON: {"op": ...}), then `input` frames and `input_end`, or `winsize`
// ("COLS ROWS") for a PTY. The holder answers `started` once the channel is open, then `out` /
// `err` frames, and ends with `end` (JSON: exit, signal, bytes) or `error` (JSON: code,
// message, hint). Closing the socket early abandons the channel (the holder sends it SIGTERM).
// A holder that lets a request go without sending it to the server says so (`not_sent`, payload:
// why): only then, or when the socket could not be dialled, may the client ask another holder.
// A socket closed with no answer after the request went out means the command may have run.

#include "core/result.hpp"
#include "core/ssh/options.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rv::proc::hold {

enum class Frame : char {
  request = 'R',
  input = 'i',
  input_end = 'I',
  winsize = 'w',
  started = 'S',
  out = 'o',
  err = 'e',
  end = 'x',
  error = 'E',
  reply = 'r',
  not_sent = 'n',
};

// Largest payload accepted: a frame longer than this is a protocol error, not an allocation.
constexpr std::uint32_t k_max_frame = 16u << 20;

// One frame on the wire.
std::string encode(Frame type, std::string_view payload);

// Writes one frame to the socket `fd` (blocking, no SIGPIPE); false once the peer is gone.
bool send_frame(int fd, Frame type, std::string_view payload);

struct Decoded {
  Frame type;
  std::string payload;
};

// Takes the first complete frame off the front of `buffer` (nullopt while it is incomplete); an
// oversized frame is an error.
Result<std::optional<Decoded>> decode(std::string& buffer);

// An Error as the `error` frame's payload, and back.
std::string error_payload(const Error& e);
Error error_from_payload(std::string_view payload);

// A command whose exec request was sent (to the holder, or by it to the server) but whose end
// never came back: it may have run, so it is asked again only when Command::repeatable.
// `label` names the connection ("rvtest@127.0.0.1:2222"). Unreachable (255).
Error answer_lost(std::string_view label);
// Whether `e` is answer_lost's error (it travels in `error` frames: the code and the message).
bool is_answer_lost(const Error& e);

// The private directory of this user's held connections: $XDG_RUNTIME_DIR/rv when that is set,
// else STATE_DIR/hold (both 0700, created when missing): never a fixed name in a shared directory
// such as /tmp, which another user could create first and so turn holding off.
std::string runtime_dir(std::string_view xdg_runtime_dir, std::string_view state_dir);

// Whether a socket fits in `dir` (a Unix socket's path is at most 107 bytes on Linux, 103 on
// macOS), at least under its short name (socket_in).
bool sockets_fit(std::string_view dir);
// The socket of `options` in `dir`: DIR/socket_name(options, config_text), or DIR/HASH.sock when
// that is too long for a Unix socket (sockets_fit(dir) says whether even that fits).
std::string socket_in(std::string_view dir, const SshOptions& options, std::string_view config_text = {});

// The file a socket's bind made at its path (device and inode), recorded right after the bind.
struct SocketFile {
  unsigned long long dev = 0;
  unsigned long long ino = 0;
};
// The file at `path` now (lstat), or nullopt when there is none.
std::optional<SocketFile> socket_file(const std::string& path);
// Removes `path` only while it is still the file `mine` (a holder that was stopped, found stale
// and replaced must not remove its successor's socket when it ends); whether it removed it.
bool remove_own_socket(const std::string& path, const SocketFile& mine);

// The socket of the connection that `options` would open: the destination (made safe for a
// file name) and a stable hash of every option that changes the session, and of `config_text`,
// the ssh config file's bytes: an edit of its User or HostName is another session, another holder
// (security-review-3 S10).
std::string socket_name(const SshOptions& options, std::string_view config_text = {});

// The destination a socket's file name was made for (socket_name's first part, as made safe), or
// "" for a name that is only a hash: how `rv connect --status` names a holder by its alias and how
// `rv disconnect ALIAS` finds a holder made with another ssh config (ux-review-3 N12).
std::string socket_destination(std::string_view file_name);

} // namespace rv::proc::hold
