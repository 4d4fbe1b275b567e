#pragma once
// A client of the holder (ssh_hold_server): each call dials the holder's Unix socket and asks
// for one channel (exec, PTY, forward) or one file operation. Internal to core/ssh.

#include "core/process/runner.hpp"
#include "core/ssh/hold_protocol.hpp"
#include "core/ssh/stream.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace rv::proc::hold {

// The request never reached the server: the holder's socket could not be dialled, or the holder
// said `not_sent`. Safe to start a new holder and ask again, whatever the command.
bool gone_before_start(const Error& e);
// Whether a request that failed with `e` is asked once more on a new holder: always when it never
// reached the server; a repeatable command (Command::repeatable) also when its answer was lost
// after it was sent (is_answer_lost: it may have run). Anything else is never sent twice.
bool may_ask_again(const Error& e, bool repeatable);

class Client {
public:
  explicit Client(std::string socket_path) : m_path(std::move(socket_path)) {}

  // The connection's name in errors ("ssh LABEL: ..."), as the holder's hello gives it.
  void set_label(std::string label) { m_label = std::move(label); }

  // Asks the holder who it is ({"label", "user", "pid", ...}); fails fast (2 s) on a stale
  // socket or a hung holder.
  Result<nlohmann::json> hello(const std::string& op = "hello");
  // Runs the command line `line` with `input` on its stdin, as ssh::exec_line does.
  Result<Outcome> exec(const std::string& line, const std::string& input, const Command& cmd);
  // Runs `line` with this process's stdin, stdout and stderr relayed, in a PTY (the terminal in
  // raw mode) when `pty`; its exit status (255 when the server sent none).
  Result<int> relay(const std::string& line, bool pty);
  // A direct-tcpip channel through the holder.
  Result<std::unique_ptr<Stream>> forward(const std::string& host, int port);
  // SFTP through the holder's session; local paths are made absolute (the holder reads and
  // writes them itself: it runs as the same user on the same machine).
  Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path, const FileMeta& meta);
  Result<void> put_symlink(const std::string& target, const std::string& remote_path);
  Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path);

  const std::string& path() const { return m_path; }

private:
  Result<int> dial();
  Result<nlohmann::json> file_op(const nlohmann::json& request);
  // answer_lost for this connection, with `why` in the debug log.
  Error lost(std::string_view why) const;

  std::string m_path;
  std::string m_label;
};

// Asks `ask(held)`; when the failure allows it (may_ask_again), asks once more of the client that
// `reconnect(error)` gives (a new holder), unless that is null (rv fell back to a direct session: the
// first answer stands). The one place a request is sent twice.
template <class Ask, class Reconnect>
auto ask_held(Client& held, Ask&& ask, bool repeatable, Reconnect&& reconnect) -> decltype(ask(held))
{
  auto result = ask(held);
  if (result || !may_ask_again(result.error(), repeatable)) {
    return result;
  }
  Result<Client*> next = reconnect(result.error());
  if (!next) {
    return std::unexpected(next.error());
  }
  if (*next != nullptr) {
    result = ask(**next);
  }
  return result;
}

// Dials the Unix socket at `path` (connect only); the fd, or why not (ENOENT, ECONNREFUSED...).
Result<int> dial_unix(const std::string& path);

} // namespace rv::proc::hold
