#pragma once
// Files over SFTP on an SSH session: send (temporary file, then rename), symlink, fetch.
// Internal to core/ssh.

#include "core/process/runner.hpp"
#include "core/ssh/handles.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace rv::proc::ssh {

class Session;

class SftpFiles {
public:
  // Uses `session`, which must outlive this object (the SFTP session is freed first).
  explicit SftpFiles(Session& session) : m_session(session) {}

  // The Runner contract of put_file, put_symlink and get_file (core/process/runner.hpp); the
  // session must be connected. The SFTP subsystem starts on first use.
  Result<std::uint64_t> put_file(const std::string& local_path, const std::string& remote_path, const FileMeta& meta);
  Result<void> put_symlink(const std::string& target, const std::string& remote_path);
  Result<std::uint64_t> get_file(const std::string& remote_path, const std::string& local_path);

private:
  Result<sftp_session> open();
  // A failed SFTP call: `ssh LABEL: WHAT: <the SFTP status in words>`.
  Error failure(std::string_view what) const;

  Session& m_session;
  SftpPtr m_sftp;
};

} // namespace rv::proc::ssh
