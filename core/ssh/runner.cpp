#include "core/ssh/runner.hpp"

#include "core/process/shell.hpp"
#include "core/ssh/direct_tcpip.hpp"
#include "core/ssh/exec.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/hold.hpp"
#include "core/ssh/session.hpp"
#include "core/ssh/sftp.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace rv::proc {

struct SshRunner::Impl {
  // Declared in this order so that the SFTP session is freed before the SSH session under it.
  ssh::Session session;
  ssh::SftpFiles files{session};
  // Set when the commands go through a held connection (docs/ssh.md, "One held connection").
  std::optional<hold::Client> held;
  std::string held_label;
  std::string held_user;
  std::string not_held;   // why holding fell back to a direct session
  bool hand_over = false; // an adopted session: the holder may take it (SshRunner::adopt)

  explicit Impl(SshOptions options) : session(std::move(options)) {}
  explicit Impl(ssh::Session&& adopted) : session(std::move(adopted)), hand_over(true) {}
};

// Runs `f` on the held connection; when the request never reached the server (the holder was
// gone, killed, or its network dropped before it sent the exec), starts a new holder and asks once
// more. A repeatable command (a read, a wait) is asked once more too when its answer was lost after
// it was sent; any other command then fails as "may have run" (docs/ssh.md, "Never run twice").
template <class F>
auto SshRunner::through_holder(F&& f, bool repeatable)
{
  return hold::ask_held(*m_impl->held, f, repeatable, [&](const Error& e) -> Result<hold::Client*> {
    spdlog::debug("ssh: {}; starting a new held connection", e.message);
    m_impl->held.reset();
    RV_TRY_VOID(connect());
    return m_impl->held ? &*m_impl->held : nullptr;
  });
}

SshRunner::SshRunner(SshOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}

SshRunner::SshRunner(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

std::unique_ptr<SshRunner> SshRunner::adopt(ssh::Session&& session)
{
  return std::unique_ptr<SshRunner>(new SshRunner(std::make_unique<Impl>(std::move(session))));
}

SshRunner::~SshRunner() = default;

Result<void> SshRunner::connect()
{
  auto& i = *m_impl;
  if (i.held) {
    return {};
  }
  const auto& options = i.session.options();
  if (options.persist.count() > 0 && (!i.session.get() || i.hand_over)) {
    i.hand_over = false; // (a held connection takes the session, or this one keeps it)
    auto client = hold::held_connection(i.session, options);
    if (client) {
      auto hello = client->hello();
      if (hello) {
        i.held_label = hello->value("label", "");
        i.held_user = hello->value("user", "");
        client->set_label(i.held_label);
        i.held = std::move(*client);
        return {};
      }
      return std::unexpected(hello.error());
    }
    if (client.error().code != ErrorCode::io) {
      return std::unexpected(client.error()); // the server's answer (auth, host key, unreachable)
    }
    i.not_held = client.error().message;
    spdlog::warn("{}; connecting directly", i.not_held);
  }
  return i.session.connect();
}

bool SshRunner::held() const
{
  return m_impl->held.has_value();
}

std::string SshRunner::not_held_reason() const
{
  if (m_impl->held) {
    return "";
  }
  if (m_impl->session.options().persist.count() == 0) {
    return "connection_persist is 0";
  }
  return m_impl->not_held;
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
  const auto line = login_shell_command(cmd.argv);
  if (m_impl->held) {
    return through_holder([&](hold::Client& c) { return c.exec(line, cmd.stdin_data.value_or(""), cmd); },
                          cmd.repeatable);
  }
  return ssh::exec_line(m_impl->session, line, cmd.stdin_data.value_or(""), cmd);
}

Result<std::vector<Outcome>> SshRunner::run_batch(const std::vector<Command>& cmds)
{
  if (cmds.empty()) {
    return std::vector<Outcome>{};
  }
  RV_TRY_VOID(connect());
  ++m_round_trips;
  // In the exec line when nothing rides on stdin, else on stdin (batch_exec, docs/ssh.md).
  const auto batch = batch_exec(cmds);
  const auto envelope = ssh::batch_envelope(cmds);
  spdlog::trace("ssh: batch of {} commands, script {}", cmds.size(),
                batch.input.empty() ? "in the exec line" : "on stdin");
  RV_TRY(outcome, m_impl->held
                      ? through_holder([&](hold::Client& c) { return c.exec(batch.line, batch.input, envelope); },
                                       std::ranges::all_of(cmds, &Command::repeatable))
                      : ssh::exec_line(m_impl->session, batch.line, batch.input, envelope));
  if (outcome.timed_out) {
    return std::unexpected(ssh_failure(ErrorCode::timeout, where().substr(4),
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
  const auto line = login_shell_command(argv);
  if (m_impl->held) {
    return through_holder([&](hold::Client& c) { return c.relay(line, true); }, false);
  }
  return ssh::exec_interactive(m_impl->session, line);
}

std::string SshRunner::user()
{
  if (!connect()) {
    return {};
  }
  return m_impl->held ? m_impl->held_user : m_impl->session.user();
}

std::string SshRunner::where() const
{
  return "ssh " + (m_impl->held && !m_impl->held_label.empty() ? m_impl->held_label : m_impl->session.label());
}

Result<std::uint64_t> SshRunner::put_file(const std::string& local_path, const std::string& remote_path,
                                          const FileMeta& meta)
{
  RV_TRY_VOID(connect());
  RV_TRY(sent, m_impl->held ? through_holder([&](hold::Client& c) { return c.put_file(local_path, remote_path, meta); })
                            : m_impl->files.put_file(local_path, remote_path, meta));
  ++m_round_trips;
  return sent;
}

Result<void> SshRunner::put_symlink(const std::string& target, const std::string& remote_path)
{
  RV_TRY_VOID(connect());
  if (m_impl->held) {
    return through_holder([&](hold::Client& c) { return c.put_symlink(target, remote_path); });
  }
  return m_impl->files.put_symlink(target, remote_path);
}

Result<std::uint64_t> SshRunner::get_file(const std::string& remote_path, const std::string& local_path)
{
  RV_TRY_VOID(connect());
  RV_TRY(got, m_impl->held ? through_holder([&](hold::Client& c) { return c.get_file(remote_path, local_path); })
                           : m_impl->files.get_file(remote_path, local_path));
  ++m_round_trips;
  return got;
}

Result<std::unique_ptr<Stream>> SshRunner::open_stream(const std::string& host, int port)
{
  RV_TRY_VOID(connect());
  if (m_impl->held) {
    return through_holder([&](hold::Client& c) { return c.forward(host, port); });
  }
  return ssh::open_forward(m_impl->session, host, port);
}

} // namespace rv::proc
