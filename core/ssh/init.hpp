#pragma once
// `rv init`'s SSH session: a connection made before rv trusts the host (its key is shown for the
// user to confirm, then written to known_hosts) and before rv has a key on it (a password or
// keyboard-interactive login installs one). Every later command uses SshRunner and the key.

#include "core/process/runner.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/options.hpp"

#include <memory>
#include <string>

namespace rv::proc {

class SshBootstrap {
public:
  explicit SshBootstrap(SshOptions options);
  ~SshBootstrap();
  SshBootstrap(const SshBootstrap&) = delete;
  SshBootstrap& operator=(const SshBootstrap&) = delete;

  // Connects (TCP and key exchange) without trusting the host key: unreachable (255) with the
  // diagnosis of connect_failure() when it cannot.
  Result<HostKeyInfo> open();
  // Appends the server's key to the known_hosts file (created 0600 in a 0700 directory).
  Result<void> trust_host_key();
  // The user's keys (as SshRunner tries them, `identity_file` first); auth_failed (254) when
  // every key is refused.
  Result<void> login_with_keys(const std::string& identity_file);
  // A key of the user's was accepted and only the second factor failed (its code refused, or no
  // one to answer it): a new key or a password would not help (N1 of the third UX review).
  bool key_accepted() const;
  // A password login (password, else keyboard-interactive answered with it); auth_failed (254).
  Result<void> login_with_password(const std::string& password);
  // Runs `cmd` after a login (argv quoted for the remote login shell, as SshRunner::run does).
  Result<Outcome> run(const Command& cmd);
  // `user@host:port`.
  std::string label() const;
  // After a login: a runner on this very session, under `later` (the options later commands
  // compute from the config init writes: the held connection's name, connection_persist). With a
  // persist, its first command hands the session to a holder: no new login, no new code (N2).
  // The bootstrap is empty afterwards.
  std::unique_ptr<Runner> into_runner(SshOptions later);
  // The remote user as resolved (destination or ssh config).
  std::string user() const;

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

} // namespace rv::proc
