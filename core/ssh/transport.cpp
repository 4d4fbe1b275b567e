#include "core/ssh/transport.hpp"

#include "core/ssh/direct_tcpip.hpp"
#include "core/ssh/exec.hpp"
#include "core/ssh/session.hpp"

namespace rv::proc::ssh {

Result<Outcome> DirectTransport::exec(const std::string& line, const std::string& input, const Command& cmd,
                                      bool /*repeatable: a direct session never sends twice*/)
{
  return exec_line(m_session, line, input, cmd);
}

Result<int> DirectTransport::exec_interactive(const std::string& line)
{
  return ssh::exec_interactive(m_session, line);
}

Result<std::uint64_t> DirectTransport::put_file(const std::string& local_path, const std::string& remote_path,
                                                const FileMeta& meta)
{
  return m_files.put_file(local_path, remote_path, meta);
}

Result<void> DirectTransport::put_symlink(const std::string& target, const std::string& remote_path)
{
  return m_files.put_symlink(target, remote_path);
}

Result<std::uint64_t> DirectTransport::get_file(const std::string& remote_path, const std::string& local_path)
{
  return m_files.get_file(remote_path, local_path);
}

Result<std::unique_ptr<Stream>> DirectTransport::open_stream(const std::string& host, int port)
{
  return open_forward(m_session, host, port);
}

std::string DirectTransport::user() const
{
  return m_session.user();
}

std::string DirectTransport::label() const
{
  return m_session.label();
}

HeldTransport::HeldTransport(hold::Client client, std::string label, std::string user, Reconnect reconnect)
    : m_client(std::move(client)), m_label(std::move(label)), m_user(std::move(user)), m_reconnect(std::move(reconnect))
{
  m_client.set_label(m_label);
}

template <class F>
auto HeldTransport::ask(F&& f, bool repeatable)
{
  return hold::ask_held(m_client, f, repeatable, m_reconnect);
}

Result<Outcome> HeldTransport::exec(const std::string& line, const std::string& input, const Command& cmd,
                                    bool repeatable)
{
  return ask([&](hold::Client& c) { return c.exec(line, input, cmd); }, repeatable);
}

Result<int> HeldTransport::exec_interactive(const std::string& line)
{
  return ask([&](hold::Client& c) { return c.relay(line, true); });
}

Result<std::uint64_t> HeldTransport::put_file(const std::string& local_path, const std::string& remote_path,
                                              const FileMeta& meta)
{
  return ask([&](hold::Client& c) { return c.put_file(local_path, remote_path, meta); });
}

Result<void> HeldTransport::put_symlink(const std::string& target, const std::string& remote_path)
{
  return ask([&](hold::Client& c) { return c.put_symlink(target, remote_path); });
}

Result<std::uint64_t> HeldTransport::get_file(const std::string& remote_path, const std::string& local_path)
{
  return ask([&](hold::Client& c) { return c.get_file(remote_path, local_path); });
}

Result<std::unique_ptr<Stream>> HeldTransport::open_stream(const std::string& host, int port)
{
  return ask([&](hold::Client& c) { return c.forward(host, port); });
}

} // namespace rv::proc::ssh
