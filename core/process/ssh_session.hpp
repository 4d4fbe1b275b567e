#pragma once
// One libssh session to the login node: connect, verify the host key, authenticate. Internal to
// core/process; SshRunner runs commands (ssh_exec) and moves files (ssh_sftp) on it.

#include "core/process/ssh_handles.hpp"
#include "core/process/ssh_runner.hpp"

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

  SshOptions m_options;
  SessionPtr m_session;
  std::string m_label;
  std::string m_user;
};

} // namespace rv::proc::ssh
