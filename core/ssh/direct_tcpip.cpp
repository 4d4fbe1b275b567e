#include "core/ssh/direct_tcpip.hpp"

#include "core/ssh/session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace rv::proc::ssh {
namespace {

class ChannelStream final : public Stream {
public:
  ChannelStream(ssh_session session, ChannelPtr channel) : m_session(session), m_channel(std::move(channel)) {}

  long read_some(char* buf, std::size_t size) override
  {
    int n = ssh_channel_read_nonblocking(m_channel.get(), buf, static_cast<std::uint32_t>(size), 0);
    if (n > 0) {
      return n;
    }
    if (n == SSH_ERROR || ssh_channel_is_eof(m_channel.get()) || ssh_channel_is_closed(m_channel.get())) {
      return -1;
    }
    return 0;
  }
  long write_some(const char* data, std::size_t size) override
  {
    if (ssh_channel_is_closed(m_channel.get())) {
      return -1;
    }
    // Never more than the peer's window: in a blocking session a larger write would wait for it.
    auto chunk = std::min<std::size_t>(size, ssh_channel_window_size(m_channel.get()));
    if (chunk == 0) {
      // Let libssh read the window adjustments that free room.
      ssh_channel_poll(m_channel.get(), 0);
      return 0;
    }
    int n = ssh_channel_write(m_channel.get(), data, static_cast<std::uint32_t>(chunk));
    return n == SSH_ERROR ? -1 : n;
  }
  void close_write() override { ssh_channel_send_eof(m_channel.get()); }
  int poll_fd() const override { return ssh_get_fd(m_session); }
  // Reading one channel makes libssh read the session socket and keep other channels' data.
  bool buffered() const override { return true; }

private:
  ssh_session m_session;
  ChannelPtr m_channel;
};

} // namespace

Result<std::unique_ptr<Stream>> open_forward(Session& session, const std::string& host, int port)
{
  ChannelPtr channel(ssh_channel_new(session.get()));
  if (!channel) {
    return std::unexpected(session.failure(ErrorCode::unreachable, "cannot open a channel"));
  }
  // The originator address is informational for sshd; 127.0.0.1:0 as `ssh -L` sends for a local client.
  if (ssh_channel_open_forward(channel.get(), host.c_str(), port, "127.0.0.1", 0) != SSH_OK) {
    return std::unexpected(
        session.failure(ErrorCode::unreachable, fmt::format("cannot open a connection to {}:{}", host, port)));
  }
  spdlog::debug("ssh: {}: direct-tcpip channel to {}:{}", session.label(), host, port);
  return std::unique_ptr<Stream>(std::make_unique<ChannelStream>(session.get(), std::move(channel)));
}

} // namespace rv::proc::ssh
