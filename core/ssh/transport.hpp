#pragma once
// How SshRunner's commands reach the login node: one Transport, either rv's own libssh session
// (direct) or the held connection's client (held; docs/ssh.md, "One held connection"). SshRunner
// picks one when it connects and asks it for everything after; it never asks both. Internal to
// core/ssh.

#include "core/process/runner.hpp"
#include "core/ssh/hold_client.hpp"
#include "core/ssh/sftp.hpp"
#include "core/ssh/stream.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace rv::proc::ssh {

class Session;

class Transport {
public:
  virtual ~Transport() = default;
  // Runs the command line `line` with `input` on its stdin (`cmd`: the timeout, interrupt policy
  // and sinks). `repeatable`: it may be sent again when its answer was lost (Command::repeatable).
  virtual Result<Outcome> exec(const std::string& line, const std::string& input, const Command& cmd,
                               bool repeatable) = 0;
  // Runs `line` attached to this terminal; its exit status.
  virtual Result<int> exec_interactive(const std::string& line) = 0;
  virtual Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path,
                                         const FileMeta& meta) = 0;
  virtual Result<void> put_symlink(const std::string& target, const std::string& remote_path) = 0;
  virtual Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path) = 0;
  // A direct-tcpip channel: the login node connects to `host`:`port`.
  virtual Result<std::unique_ptr<Stream>> open_stream(const std::string& host, int port) = 0;
  // The remote user and the connection's name in messages ("" = not known here).
  virtual std::string user() const = 0;
  virtual std::string label() const = 0;
  // The held connection's client, or null for a direct session.
  virtual hold::Client* held_client() = 0;
};

// Everything on the connected `session` (which must outlive this transport): exec, PTY, SFTP
// (opened on first use) and direct-tcpip channels.
class DirectTransport final : public Transport {
public:
  explicit DirectTransport(Session& session) : m_session(session), m_files(session) {}

  Result<Outcome> exec(const std::string& line, const std::string& input, const Command& cmd, bool repeatable) override;
  Result<int> exec_interactive(const std::string& line) override;
  Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path,
                                 const FileMeta& meta) override;
  Result<void> put_symlink(const std::string& target, const std::string& remote_path) override;
  Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path) override;
  Result<std::unique_ptr<Stream>> open_stream(const std::string& host, int port) override;
  std::string user() const override;
  std::string label() const override;
  hold::Client* held_client() override { return nullptr; }

private:
  Session& m_session;
  SftpFiles m_files; // freed before the session under it
};

// Everything through the holder's socket. When a request never reached the server (the holder
// was gone, killed, or its network dropped before it sent the exec), `reconnect` gives the client
// of a new holder (null: rv fell back to a direct session) and the request is asked once more. A
// repeatable command (a read, a wait) is asked once more too when its answer was lost after it was
// sent; any other command then fails as "may have run" (docs/ssh.md, "Never run twice";
// hold::ask_held is the one place that decides).
class HeldTransport final : public Transport {
public:
  using Reconnect = std::function<Result<hold::Client*>(const Error&)>;
  // `client` answered a hello that named `label` and `user`.
  HeldTransport(hold::Client client, std::string label, std::string user, Reconnect reconnect);

  Result<Outcome> exec(const std::string& line, const std::string& input, const Command& cmd, bool repeatable) override;
  Result<int> exec_interactive(const std::string& line) override;
  Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path,
                                 const FileMeta& meta) override;
  Result<void> put_symlink(const std::string& target, const std::string& remote_path) override;
  Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path) override;
  Result<std::unique_ptr<Stream>> open_stream(const std::string& host, int port) override;
  std::string user() const override { return m_user; }
  std::string label() const override { return m_label; }
  hold::Client* held_client() override { return &m_client; }

private:
  template <class F>
  auto ask(F&& f, bool repeatable = false);

  hold::Client m_client;
  std::string m_label;
  std::string m_user;
  Reconnect m_reconnect;
};

} // namespace rv::proc::ssh
