#pragma once
// The holder's spare session channel (docs/ssh.md, "A channel opened ahead"). libssh 0.10's
// ssh_channel_open_session waits for the server's answer: a command that opens its channel pays a
// round trip before its exec. The holder keeps one channel opened ahead, hands it to the next
// exec or pty request and opens the next spare without waiting for the server. Internal to
// core/ssh.

#include "core/ssh/handles.hpp"

namespace rv::proc::ssh {

// When to open a spare, as data (unit-tested): what the holder knows of its spare and its queue.
class SparePlan {
public:
  enum class Phase { none, opening, open };

  Phase phase() const { return m_phase; }
  bool held_back() const { return m_held_back; }
  // Whether to send a channel open now: none there, nothing held back, and no command waiting
  // for a slot under the server's MaxSessions (a waiting command goes first).
  bool should_open(bool commands_queued) const;
  void sent() { m_phase = Phase::opening; }
  void confirmed() { m_phase = Phase::open; }
  void taken() { m_phase = Phase::none; }
  // The server refused the spare (MaxSessions) or closed it (ChannelTimeout): no new one until a
  // command's channel starts or closes, so a server that keeps refusing costs one try per command.
  void lost();
  void resume() { m_held_back = false; }

private:
  Phase m_phase = Phase::none;
  bool m_held_back = false;
};

// The spare on a live session. Never waits for the server except in take(), and then only for an
// open already sent.
class SpareChannel {
public:
  explicit SpareChannel(ssh_session session) : m_session(session) {}
  ~SpareChannel();
  SpareChannel(const SpareChannel&) = delete;
  SpareChannel& operator=(const SpareChannel&) = delete;

  // Sends a channel open when the plan wants one.
  void refill(bool commands_queued);
  // Reads what the server sent (the open's answer, a close of the spare); call when the
  // session's socket is readable.
  void pump();
  // The open spare (waiting for the answer to an open in flight), or null: none, refused, or
  // closed by the server. The caller then opens a channel itself.
  ChannelPtr take();
  // A command's channel started or closed: a refused or closed spare may be tried again.
  void resume() { m_plan.resume(); }
  bool open() const { return m_plan.phase() == SparePlan::Phase::open; }

private:
  // One step of libssh's open; `wait`: block for the answer.
  void advance(bool wait);
  void drop();

  ssh_session m_session;
  // Raw while opening: ChannelFreer's ssh_channel_close would send EOF for a channel the
  // server never confirmed (remote id 0, another channel's).
  ssh_channel m_channel = nullptr;
  SparePlan m_plan;
};

} // namespace rv::proc::ssh
