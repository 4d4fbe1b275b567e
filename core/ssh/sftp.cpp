#include "core/ssh/sftp.hpp"

#include "core/random.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/session.hpp"
#include "core/store/temp_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>

namespace rv::proc::ssh {

Result<sftp_session> SftpFiles::open()
{
  if (m_sftp) {
    return m_sftp.get();
  }
  SftpPtr sftp(sftp_new(m_session.get()));
  if (!sftp || sftp_init(sftp.get()) != SSH_OK) {
    return std::unexpected(
        m_session.failure(ErrorCode::unreachable, "cannot start SFTP",
                          "the server may not offer the sftp subsystem; install rsync on both sides instead"));
  }
  m_sftp = std::move(sftp);
  return m_sftp.get();
}

Error SftpFiles::failure(std::string_view what) const
{
  const auto why = sftp_status_text(sftp_get_error(m_sftp.get()), ssh_get_error(m_session.get()));
  return ssh_failure(ErrorCode::io, m_session.label(), what, why);
}

Result<std::uint64_t> SftpFiles::put_file(const std::string& local_path, const std::string& remote_path,
                                          const FileMeta& meta)
{
  RV_TRY(sftp, open());
  UniqueFd fd(::open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    return fail(ErrorCode::io, fmt::format("cannot read {}: {}", local_path, std::strerror(errno)));
  }
  // A random temp name, created exclusively (SSH_FXF_EXCL: the server's open(2) gets O_EXCL, which
  // never follows a symlink and never truncates an existing file), with the file's mode from the
  // start: a co-user who can write the directory cannot point rv's write at another file (N4).
  const std::string tmp = remote_path + ".rv-tmp." + random_hex(8);
  const auto mode = static_cast<mode_t>(meta.mode & 07777);
  SftpFilePtr file(sftp_open(sftp, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode));
  if (!file) {
    return std::unexpected(failure(fmt::format("cannot write {}", tmp)));
  }
  std::uint64_t sent = 0;
  char buf[32768];
  bool ok = true;
  while (true) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    if (sftp_write(file.get(), buf, static_cast<std::size_t>(n)) != n) {
      ok = false;
      break;
    }
    sent += static_cast<std::uint64_t>(n);
  }
  fd.close();
  // The mode the server's umask left, read on the handle: a chmod by name (libssh 0.10 has no
  // fsetstat) is sent only when the umask took bits away.
  bool mode_ok = false;
  if (ok) {
    SftpAttributesPtr got(sftp_fstat(file.get()));
    mode_ok = got && (got->permissions & 07777) == mode;
  }
  file.reset();
  timeval times[2] = {{static_cast<time_t>(meta.mtime_s), 0}, {static_cast<time_t>(meta.mtime_s), 0}};
  if (!ok || (!mode_ok && sftp_chmod(sftp, tmp.c_str(), mode) != 0) || sftp_utimes(sftp, tmp.c_str(), times) != 0) {
    auto error = failure(fmt::format("cannot send {} to {}", local_path, remote_path));
    sftp_unlink(sftp, tmp.c_str());
    return std::unexpected(std::move(error));
  }
  // OpenSSH's server refuses to rename over an existing file: unlink first (a snapshot's hard
  // link keeps the old content either way).
  sftp_unlink(sftp, remote_path.c_str());
  if (sftp_rename(sftp, tmp.c_str(), remote_path.c_str()) != 0) {
    auto error = failure(fmt::format("cannot rename {} to {}", tmp, remote_path));
    sftp_unlink(sftp, tmp.c_str());
    return std::unexpected(std::move(error));
  }
  return sent;
}

Result<void> SftpFiles::put_symlink(const std::string& target, const std::string& remote_path)
{
  RV_TRY(sftp, open());
  sftp_unlink(sftp, remote_path.c_str());
  if (sftp_symlink(sftp, target.c_str(), remote_path.c_str()) != 0) {
    return std::unexpected(failure(fmt::format("cannot create the symlink {}", remote_path)));
  }
  return {};
}

Result<std::uint64_t> SftpFiles::get_file(const std::string& remote_path, const std::string& local_path)
{
  RV_TRY(sftp, open());
  SftpAttributesPtr attrs(sftp_stat(sftp, remote_path.c_str()));
  if (!attrs) {
    return std::unexpected(failure(fmt::format("cannot read {}", remote_path)));
  }
  const auto mode = static_cast<mode_t>(attrs->permissions & 07777);
  const timespec times[2] = {{static_cast<time_t>(attrs->mtime), 0}, {static_cast<time_t>(attrs->mtime), 0}};
  attrs.reset();
  SftpFilePtr file(sftp_open(sftp, remote_path.c_str(), O_RDONLY, 0));
  if (!file) {
    return std::unexpected(failure(fmt::format("cannot read {}", remote_path)));
  }
  auto created = store::create_temp_beside(local_path);
  if (!created) {
    return fail(ErrorCode::io, fmt::format("cannot write {}: {}", local_path, created.error().message));
  }
  const std::string tmp = created->path.string();
  UniqueFd fd(created->fd);
  std::uint64_t got = 0;
  char buf[32768];
  bool ok = true;
  while (true) {
    auto n = sftp_read(file.get(), buf, sizeof buf);
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    if (::write(fd.get(), buf, static_cast<std::size_t>(n)) != n) {
      ok = false;
      break;
    }
    got += static_cast<std::uint64_t>(n);
  }
  file.reset();
  ok = ok && ::fchmod(fd.get(), mode | S_IWUSR | S_IRUSR) == 0 && ::futimens(fd.get(), times) == 0;
  ok = fd.close() && ok;
  if (!ok || ::rename(tmp.c_str(), local_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return fail(ErrorCode::io, fmt::format("cannot fetch {} to {}", remote_path, local_path));
  }
  return got;
}

} // namespace rv::proc::ssh
