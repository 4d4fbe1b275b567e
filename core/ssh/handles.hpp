#pragma once
// RAII owners of libssh handles: each handle is freed exactly once, on every path, so no early
// return can leak or double-free one. Internal to core/ssh (libssh is a private dependency).

#include "core/unique_fd.hpp"

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <memory>
#include <string>
#include <unistd.h>
#include <utility>

namespace rv::proc::ssh {

// Calls libssh's `Free` on the handle.
template <auto Free>
struct Freer {
  template <class T>
  void operator()(T* handle) const noexcept
  {
    Free(handle);
  }
};

// Disconnects (a no-op when never connected), then frees the session and the channels it still has.
struct SessionFreer {
  void operator()(ssh_session session) const noexcept
  {
    ssh_disconnect(session);
    ssh_free(session);
  }
};

// Closes the channel (sends EOF and close) when it is open, then frees it. One the server never
// confirmed (refused under MaxSessions, or still opening) is only freed: libssh 0.10's
// ssh_channel_close sends EOF and close for it anyway, to remote channel 0 (its id was never
// set), which closes another command's channel and then ends the session ("close packet referred
// to nonexistent channel 0"). ssh_channel_free answers a close the server sent.
struct ChannelFreer {
  void operator()(ssh_channel channel) const noexcept
  {
    if (ssh_channel_is_open(channel) != 0) {
      ssh_channel_close(channel);
    }
    ssh_channel_free(channel);
  }
};

// rv's callbacks on a channel, removed before the channel is freed (declare it after the
// ChannelPtr, so that it goes first; call remove() before resetting the channel by hand). libssh
// 0.10 keeps a channel closed on our side until the server's close arrives (ssh_channel_free
// defers the free) and calls its callbacks for the packets that arrive meanwhile, during a later
// command's exec: callbacks freed with their stack frame or their job were a jump to garbage
// (SIGINT mid-race in test_race: rv exited 139 as it sent the scancel).
class ChannelHook {
public:
  ChannelHook() = default;
  ChannelHook(const ChannelHook&) = delete;
  ChannelHook& operator=(const ChannelHook&) = delete;
  ~ChannelHook() { remove(); }
  void set(ssh_channel channel, ssh_channel_callbacks callbacks)
  {
    remove();
    ssh_set_channel_callbacks(channel, callbacks);
    m_channel = channel;
    m_callbacks = callbacks;
  }
  void remove() noexcept
  {
    if (m_channel != nullptr) {
      ssh_remove_channel_callbacks(m_channel, m_callbacks);
      m_channel = nullptr;
    }
  }

private:
  ssh_channel m_channel = nullptr;
  ssh_channel_callbacks m_callbacks = nullptr;
};

// A public key hash from ssh_get_publickey_hash.
struct HashFreer {
  void operator()(unsigned char* hash) const noexcept { ssh_clean_pubkey_hash(&hash); }
};

using SessionPtr = std::unique_ptr<ssh_session_struct, SessionFreer>;
using ChannelPtr = std::unique_ptr<ssh_channel_struct, ChannelFreer>;
using KeyPtr = std::unique_ptr<ssh_key_struct, Freer<ssh_key_free>>;
using HashPtr = std::unique_ptr<unsigned char, HashFreer>;
// A string libssh allocated (ssh_options_get, ssh_get_fingerprint_hash).
using CharPtr = std::unique_ptr<char, Freer<ssh_string_free_char>>;
using SftpPtr = std::unique_ptr<sftp_session_struct, Freer<sftp_free>>;
using SftpFilePtr = std::unique_ptr<sftp_file_struct, Freer<sftp_close>>;
using SftpAttributesPtr = std::unique_ptr<sftp_attributes_struct, Freer<sftp_attributes_free>>;

// The channel callback (channel_exit_signal_function) that keeps the name of the signal that ended
// the remote command in the std::string its userdata points to ("" when libssh gives none).
inline void keep_exit_signal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*,
                             void* userdata)
{
  *static_cast<std::string*>(userdata) = signal ? signal : "";
}

// A local file descriptor, closed once (core/unique_fd.hpp).
using UniqueFd = rv::UniqueFd;

} // namespace rv::proc::ssh
