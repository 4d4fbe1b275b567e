#pragma once
// One libssh session to the login node: connect, verify the host key, authenticate. Internal to
// core/ssh; SshRunner runs commands (exec.hpp) and moves files (sftp.hpp) on it.

#include "core/ssh/destination.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/handles.hpp"
#include "core/ssh/openssh.hpp"
#include "core/ssh/options.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace rv::proc::ssh {

class Session {
public:
  explicit Session(SshOptions options) : m_options(std::move(options)) {}

  // Connects, verifies the host key and authenticates, unless already connected. On failure the
  // session is freed, so the next call tries afresh.
  Result<void> connect();

  // rv init's steps, for a session that has no trust yet: open() connects (TCP and key exchange)
  // without checking the host key; host_key() says what the server offered and what known_hosts
  // says of it; trust_host_key() records it; then authenticate with keys or a password.
  Result<void> open();
  HostKeyInfo host_key() const;
  Result<void> trust_host_key();
  // The keys as connect() tries them, `identity_file` first ("" = the options' own).
  Result<void> authenticate_keys(const std::string& identity_file)
  {
    if (!identity_file.empty()) {
      m_options.identity_file = identity_file;
    }
    return authenticate();
  }
  // Password, else keyboard-interactive answered with the password (echo-off prompts only).
  Result<void> authenticate_password(const std::string& password);
  // The host accepted a key (or a Kerberos ticket) of the user's and asked for a second factor:
  // whatever failed after that was the code, not the key (rv init then generates nothing; N1).
  bool key_accepted() const { return m_key_accepted; }

  // After a fork that gave the session to the child (the holder): forgets it without a word to
  // the server (ssh_disconnect would end the child's session too) and without freeing it.
  void abandon() { [[maybe_unused]] auto* left = m_session.release(); }
  // The options as given (the held connection's socket is named after them).
  const SshOptions& options() const { return m_options; }
  // After an authenticated rv init session: the options later commands compute from the config
  // init wrote, so that the holder it is handed to is the one they find (SshRunner::adopt).
  void replace_options(SshOptions options) { m_options = std::move(options); }

  // The connected session (null before connect() succeeds).
  ssh_session get() const { return m_session.get(); }
  // `user@host:port` once resolved, else the destination as given: how messages name the host.
  const std::string& label() const { return m_label.empty() ? m_options.destination : m_label; }
  // The remote user as the ssh config or the destination resolved it ("" when neither said).
  const std::string& user() const { return m_user; }

  // A failed libssh call on this session: `ssh LABEL: WHAT: <libssh's last error>`.
  Error failure(ErrorCode code, std::string_view what, std::string hint = {}) const;

private:
  Result<void> configure(const SshDestination& dest);
  Result<void> verify_host_key();
  Result<void> authenticate();
  // core/ssh/session_auth.cpp: user certificates (`<key>-cert.pub`, CertificateFile) and the
  // IdentitiesOnly walk through the identity files, which libssh 0.10 leaves to the caller.
  struct KeyAttempts;
  // The certificates, then the key files OpenSSH would offer itself; nullopt: none decided.
  std::optional<Result<void>> authenticate_files(KeyAttempts& attempts);
  int try_certificate(const std::string& key_file, const std::string& cert_file, KeyAttempts& attempts);
  // libssh's answer to the key, nullopt when the file cannot be read (a passphrase: noted in
  // `attempts.locked`).
  std::optional<int> try_key_file(const std::string& key_file, KeyAttempts& attempts);
  // A key with a passphrase, after the agent: when the host would take it, the passphrase is asked
  // (the terminal or SSH_ASKPASS, 3 tries; wiped after use); nullopt: skipped (refused by the host,
  // no one to ask, Enter alone), so the next key goes on.
  std::optional<Result<void>> try_locked_key(const std::string& key_file, KeyAttempts& attempts);
  // OpenSSH's reading of the config for the host (`ssh -G`; empty when there is none) and the
  // ProxyJump built from it (core/ssh/session.cpp).
  void read_openssh_view(const SshDestination& dest);
  Result<void> set_proxy_jump(const SshEndpoint& endpoint);
  // The jump's last error line (its `ssh -E` file), "" when none; the file is removed.
  std::string take_jump_error();
  // After a partial success (or for a password login): keyboard-interactive rounds, `password`
  // answering at most one password prompt, the user every other prompt.
  Result<void> keyboard_interactive(std::optional<std::string> password);
  // The answer to a publickey or password attempt: success, a second factor, or `refused`.
  Result<void> finish(int rc, Error refused);

  SshOptions m_options;
  SessionPtr m_session;
  std::string m_known_hosts; // the file host keys are checked against and written to
  std::string m_label;
  std::string m_user;
  OpenSshView m_view;
  std::string m_jump_log;         // the jump's `ssh -E` file while connecting ("" = no jump)
  bool m_key_accepted = false;    // a publickey/GSSAPI answer was SSH_AUTH_PARTIAL
  bool m_answers_refused = false; // the last keyboard-interactive exchange ended in a refusal
};

} // namespace rv::proc::ssh
