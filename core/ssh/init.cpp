#include "core/ssh/init.hpp"

#include "core/process/shell.hpp"
#include "core/ssh/exec.hpp"
#include "core/ssh/runner.hpp"
#include "core/ssh/session.hpp"

#include <spdlog/spdlog.h>

namespace rv::proc {

struct SshBootstrap::Impl {
  ssh::Session session;
  explicit Impl(SshOptions options) : session(std::move(options)) {}
};

SshBootstrap::SshBootstrap(SshOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}

SshBootstrap::~SshBootstrap() = default;

Result<HostKeyInfo> SshBootstrap::open()
{
  RV_TRY_VOID(m_impl->session.open());
  return m_impl->session.host_key();
}

Result<void> SshBootstrap::trust_host_key()
{
  return m_impl->session.trust_host_key();
}

Result<void> SshBootstrap::login_with_keys(const std::string& identity_file)
{
  return m_impl->session.authenticate_keys(identity_file);
}

bool SshBootstrap::key_accepted() const
{
  return m_impl->session.key_accepted();
}

Result<void> SshBootstrap::login_with_password(const std::string& password)
{
  return m_impl->session.authenticate_password(password);
}

Result<Outcome> SshBootstrap::run(const Command& cmd)
{
  if (cmd.argv.empty()) {
    return fail(ErrorCode::usage, "empty command");
  }
  spdlog::trace("ssh: run {}", shell_join(cmd.argv));
  return ssh::exec_line(m_impl->session, login_shell_command(cmd.argv), cmd.stdin_data.value_or(""), cmd);
}

std::unique_ptr<Runner> SshBootstrap::into_runner(SshOptions later)
{
  m_impl->session.replace_options(std::move(later));
  return SshRunner::adopt(std::move(m_impl->session));
}

std::string SshBootstrap::label() const
{
  return m_impl->session.label();
}

std::string SshBootstrap::user() const
{
  return m_impl->session.user();
}

} // namespace rv::proc
