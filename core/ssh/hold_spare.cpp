#include "core/ssh/hold_spare.hpp"

namespace rv::proc::ssh {

bool SparePlan::should_open(bool commands_queued) const
{
  return m_phase == Phase::none && !m_held_back && !commands_queued;
}

void SparePlan::lost()
{
  m_phase = Phase::none;
  m_held_back = true;
}

SpareChannel::~SpareChannel()
{
  drop();
}

void SpareChannel::refill(bool commands_queued)
{
  if (m_channel || !m_plan.should_open(commands_queued)) {
    return;
  }
  m_channel = ssh_channel_new(m_session);
  if (!m_channel) {
    return;
  }
  m_plan.sent();
  advance(false);
}

void SpareChannel::pump()
{
  if (!m_channel) {
    return;
  }
  if (m_plan.phase() == SparePlan::Phase::opening) {
    advance(false);
    return;
  }
  ssh_channel_poll(m_channel, 0); // reads what arrived, never waits
  if (!ssh_channel_is_open(m_channel) || ssh_channel_is_eof(m_channel)) {
    drop();
    m_plan.lost();
  }
}

ChannelPtr SpareChannel::take()
{
  if (m_channel && m_plan.phase() == SparePlan::Phase::opening) {
    advance(true);
  }
  if (!m_channel) {
    return nullptr;
  }
  ssh_channel_poll(m_channel, 0); // a close the server sent since
  if (!ssh_channel_is_open(m_channel) || ssh_channel_is_eof(m_channel)) {
    drop();
    m_plan.lost();
    return nullptr;
  }
  ChannelPtr channel(m_channel);
  m_channel = nullptr;
  m_plan.taken();
  return channel;
}

void SpareChannel::advance(bool wait)
{
  if (!wait) {
    ssh_set_blocking(m_session, 0);
  }
  const int rc = ssh_channel_open_session(m_channel);
  if (!wait) {
    ssh_set_blocking(m_session, 1);
  }
  if (rc == SSH_OK) {
    m_plan.confirmed();
  } else if (rc != SSH_AGAIN) {
    drop();
    m_plan.lost();
  }
}

// ssh_channel_free closes an open channel (and answers a server's close) itself; one that was
// never confirmed is only let go, with no message to the server.
void SpareChannel::drop()
{
  if (m_channel) {
    ssh_channel_free(m_channel);
    m_channel = nullptr;
  }
}

} // namespace rv::proc::ssh
