#include "core/ssh/runner.hpp"

#include "core/process/shell.hpp"
#include "core/ssh/exec.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/hold.hpp"
#include "core/ssh/session.hpp"
#include "core/ssh/transport.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace rv::proc {

struct SshRunner::Impl {
  // Declared in this order so that the transport (and its SFTP session) is freed before the SSH
  // session under it.
  ssh::Session session;
  // How the commands go (after connect()): through the held connection or on `session`.
  std::unique_ptr<ssh::Transport> transport;
  // A held transport whose holder was lost while it asked: kept alive until its call has returned
  // (the call is still on the stack when `transport` is replaced), freed by the next connect().
  std::unique_ptr<ssh::Transport> lost;
  std::string not_held;   // why holding fell back to a direct session
  bool hand_over = false; // an adopted session: the holder may take it (SshRunner::adopt)

  explicit Impl(SshOptions options) : session(std::move(options)) {}
  explicit Impl(ssh::Session&& adopted) : session(std::move(adopted)), hand_over(true) {}
};

SshRunner::SshRunner(SshOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}

SshRunner::SshRunner(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

std::unique_ptr<SshRunner> SshRunner::adopt(ssh::Session&& session)
{
  return std::unique_ptr<SshRunner>(new SshRunner(std::make_unique<Impl>(std::move(session))));
}

SshRunner::~SshRunner() = default;

// A lost holder: starts a new one (or falls back to a direct session) and hands hold::ask_held
// the client to ask once more, null when the commands now go directly.
Result<hold::Client*> SshRunner::reconnect(const Error& e)
{
  spdlog::debug("ssh: {}; starting a new held connection", e.message);
  m_impl->lost = std::move(m_impl->transport);
  RV_TRY_VOID(connect());
  return m_impl->transport->held_client();
}

Result<void> SshRunner::connect()
{
  auto& i = *m_impl;
  if (i.transport) {
    i.lost.reset();
    return {};
  }
  const auto& options = i.session.options();
  if (options.persist.count() > 0 && (!i.session.get() || i.hand_over)) {
    i.hand_over = false; // (a held connection takes the session, or this one keeps it)
    auto client = hold::held_connection(i.session, options);
    if (client) {
      auto hello = client->hello();
      if (!hello) {
        return std::unexpected(hello.error());
      }
      i.transport =
          std::make_unique<ssh::HeldTransport>(std::move(*client), hello->value("label", ""), hello->value("user", ""),
                                               [this](const Error& e) { return reconnect(e); });
      return {};
    }
    if (client.error().code != ErrorCode::io) {
      return std::unexpected(client.error()); // the server's answer (auth, host key, unreachable)
    }
    i.not_held = client.error().message;
    spdlog::warn("{}; connecting directly", i.not_held);
  }
  RV_TRY_VOID(i.session.connect());
  i.transport = std::make_unique<ssh::DirectTransport>(i.session);
  return {};
}

bool SshRunner::held() const
{
  return m_impl->transport && m_impl->transport->held_client() != nullptr;
}

std::string SshRunner::not_held_reason() const
{
  if (held()) {
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
  return m_impl->transport->exec(login_shell_command(cmd.argv), cmd.stdin_data.value_or(""), cmd, cmd.repeatable);
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
  RV_TRY(outcome,
         m_impl->transport->exec(batch.line, batch.input, envelope, std::ranges::all_of(cmds, &Command::repeatable)));
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
  return m_impl->transport->exec_interactive(login_shell_command(argv));
}

std::string SshRunner::user()
{
  if (!connect()) {
    return {};
  }
  return m_impl->transport->user();
}

std::string SshRunner::where() const
{
  const auto label = m_impl->transport ? m_impl->transport->label() : std::string();
  return "ssh " + (label.empty() ? m_impl->session.label() : label);
}

Result<std::uint64_t> SshRunner::put_file(const std::string& local_path, const std::string& remote_path,
                                          const FileMeta& meta)
{
  RV_TRY_VOID(connect());
  RV_TRY(sent, m_impl->transport->put_file(local_path, remote_path, meta));
  ++m_round_trips;
  return sent;
}

Result<void> SshRunner::put_symlink(const std::string& target, const std::string& remote_path)
{
  RV_TRY_VOID(connect());
  return m_impl->transport->put_symlink(target, remote_path);
}

Result<std::uint64_t> SshRunner::get_file(const std::string& remote_path, const std::string& local_path)
{
  RV_TRY_VOID(connect());
  RV_TRY(got, m_impl->transport->get_file(remote_path, local_path));
  ++m_round_trips;
  return got;
}

Result<std::unique_ptr<Stream>> SshRunner::open_stream(const std::string& host, int port)
{
  RV_TRY_VOID(connect());
  return m_impl->transport->open_stream(host, port);
}

} // namespace rv::proc
