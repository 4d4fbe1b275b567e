#include "core/process/ssh_runner.hpp"

#include "core/process/shell.hpp"
#include "core/process/ssh_exec.hpp"
#include "core/process/ssh_failures.hpp"
#include "core/process/ssh_forward.hpp"
#include "core/process/ssh_session.hpp"
#include "core/process/ssh_sftp.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rv::proc {

struct SshRunner::Impl {
  // Declared in this order so that the SFTP session is freed before the SSH session under it.
  ssh::Session session;
  ssh::SftpFiles files{session};

  explicit Impl(SshOptions options) : session(std::move(options)) {}
};

SshRunner::SshRunner(SshOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}

SshRunner::~SshRunner() = default;

Result<void> SshRunner::connect()
{
  return m_impl->session.connect();
}

Result<Outcome> SshRunner::run(const Command& cmd)
{
  if (cmd.argv.empty()) {
    return fail(ErrorCode::usage, "empty command");
  }
  RV_TRY_VOID(connect());
  ++m_round_trips;
  // Whatever the login shell (fish, tcsh...), /bin/sh parses the command (docs/ssh.md, "Quoting").
  spdlog::trace("ssh: run {}", shell_join(cmd.argv));
  return ssh::exec_line(m_impl->session, login_shell_command(cmd.argv), cmd.stdin_data.value_or(""), cmd);
}

Result<std::vector<Outcome>> SshRunner::run_batch(const std::vector<Command>& cmds)
{
  if (cmds.empty()) {
    return std::vector<Outcome>{};
  }
  RV_TRY_VOID(connect());
  ++m_round_trips;
  // The script travels on stdin: no quoting through the login shell, no ARG_MAX, nothing in ps.
  RV_TRY(outcome, ssh::exec_line(m_impl->session, "exec /bin/sh -s", batch_script(cmds), ssh::batch_envelope(cmds)));
  if (outcome.timed_out) {
    return std::unexpected(ssh_failure(ErrorCode::timeout, m_impl->session.label(),
                                       fmt::format("a batch of {} commands timed out", cmds.size())));
  }
  auto parsed = parse_batch_output(outcome.out, cmds.size());
  if (!parsed) {
    spdlog::debug("ssh: batch exit {}, stderr: {}", outcome.exit_code, outcome.err);
  }
  return parsed;
}

Result<int> SshRunner::run_interactive(const std::vector<std::string>& argv)
{
  RV_TRY_VOID(connect());
  ++m_round_trips;
  return ssh::exec_interactive(m_impl->session, login_shell_command(argv));
}

std::string SshRunner::user()
{
  if (!connect()) {
    return {};
  }
  return m_impl->session.user();
}

std::string SshRunner::where() const
{
  return "ssh " + m_impl->session.label();
}

Result<std::uint64_t> SshRunner::put_file(const std::string& local_path, const std::string& remote_path,
                                          const FileMeta& meta)
{
  RV_TRY_VOID(connect());
  RV_TRY(sent, m_impl->files.put_file(local_path, remote_path, meta));
  ++m_round_trips;
  return sent;
}

Result<void> SshRunner::put_symlink(const std::string& target, const std::string& remote_path)
{
  RV_TRY_VOID(connect());
  return m_impl->files.put_symlink(target, remote_path);
}

Result<std::uint64_t> SshRunner::get_file(const std::string& remote_path, const std::string& local_path)
{
  RV_TRY_VOID(connect());
  RV_TRY(got, m_impl->files.get_file(remote_path, local_path));
  ++m_round_trips;
  return got;
}

Result<std::unique_ptr<Stream>> SshRunner::open_stream(const std::string& host, int port)
{
  RV_TRY_VOID(connect());
  return ssh::open_forward(m_impl->session, host, port);
}

} // namespace rv::proc
