#pragma once
// Runs commands on the login node over one connection, kept open for the whole rv run: one
// Transport (core/ssh/transport.hpp), rv's own libssh session or the held connection, chosen when
// it connects. The pieces: session (connect, host key, keys), exec (exec, batch, PTY), sftp
// (files), handles (RAII owners of libssh handles), failures (the one error shape).

#include "core/process/runner.hpp"
#include "core/ssh/options.hpp"
#include "core/ssh/stream.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace rv::proc {

namespace ssh {
class Session;
}
namespace hold {
class Client;
}

class SshRunner final : public Runner, public StreamOpener {
public:
  explicit SshRunner(SshOptions options);
  // A runner on a session that is already authenticated (rv init's: SshBootstrap::into_runner).
  // With connection_persist, its first command hands that very session to a new holder (or uses
  // a live one) instead of logging in again: one second-factor code for all of init and the
  // commands after it (third UX review N2).
  static std::unique_ptr<SshRunner> adopt(ssh::Session&& session);
  ~SshRunner() override;
  SshRunner(const SshRunner&) = delete;
  SshRunner& operator=(const SshRunner&) = delete;

  // Connects, verifies the host key and authenticates, unless already connected.
  Result<void> connect();

  // Runs `cmd` as one channel exec: the argv is quoted for the remote POSIX shell.
  Result<Outcome> run(const Command& cmd) override;
  // Runs every command in one channel (one round trip), each with its own outcome.
  Result<std::vector<Outcome>> run_batch(const std::vector<Command>& cmds) override;
  std::string where() const override;
  // The remote user, as the ssh config or DEST resolved it (connects if needed).
  std::string user() override;
  // Runs `argv` on this terminal (SSH: in a PTY, with the local terminal in raw mode).
  Result<int> run_interactive(const std::vector<std::string>& argv) override;
  // SFTP on the same session (opened on first use).
  Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path,
                                 const FileMeta& meta) override;
  Result<void> put_symlink(const std::string& target, const std::string& remote_path) override;
  Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path) override;
  // A direct-tcpip channel on the session: the login node connects to `host`:`port`.
  Result<std::unique_ptr<Stream>> open_stream(const std::string& host, int port) override;

  // Whether the commands go through a held connection (after connect()).
  bool held() const;
  // Why the commands do not go through a held connection (after connect(); "" when they do):
  // "connection_persist is 0", or the failure of the holding itself (its directory not private...).
  std::string not_held_reason() const;

private:
  // A lost holder replaced (HeldTransport asks this once): the next holder's client, or null
  // when the commands now go on a direct session.
  Result<hold::Client*> reconnect(const Error& e);

  struct Impl;
  explicit SshRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace rv::proc
