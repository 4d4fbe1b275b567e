#include "core/ssh/hold_server.hpp"

#include "core/platform/platform.hpp"
#include "core/ssh/direct_tcpip.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/hold_protocol.hpp"
#include "core/ssh/hold_spare.hpp"
#include "core/ssh/session.hpp"
#include "core/ssh/sftp.hpp"

#include <fmt/format.h>
#include <libssh/callbacks.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <list>
#include <memory>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace rv::proc::ssh {
namespace {

using SteadyClock = std::chrono::steady_clock;
using json = nlohmann::json;
using hold::Frame;

volatile std::sig_atomic_t g_stop = 0;
void on_stop(int)
{
  g_stop = 1;
}

// One client connection: its request, and the channel (or stream) it asked for.
struct Job {
  int fd = -1;
  std::string inbox; // bytes from the client not yet decoded
  std::string input; // stdin for the channel not yet written
  bool input_end = false;
  bool eof_sent = false;
  bool queued = false; // waiting for a channel slot (MaxSessions)
  SteadyClock::time_point queued_since{};
  json request;
  ChannelPtr channel;
  std::unique_ptr<Stream> stream; // a forward's direct-tcpip channel
  std::string exit_signal;
  ssh_channel_callbacks_struct callbacks{};
  ChannelHook hook;       // after channel and callbacks: removed from the channel first
  bool exec_sent = false; // ssh_channel_request_exec was called: the command may run from here on
  bool done = false;
  // Frames for the client not yet taken by its socket: the holder never blocks on one client (a
  // stalled pipe, `rv logs | less`, a client busy sending its stdin), security-review-3 S3.
  std::string outbox;
  bool client_gone = false;
  SteadyClock::time_point sent_at = SteadyClock::now(); // when the client last took bytes

  ~Job()
  {
    hook.remove();
    if (fd >= 0) {
      ::close(fd);
    }
  }
  void send(Frame type, std::string_view payload)
  {
    if (fd < 0 || client_gone) {
      return;
    }
    outbox += hold::encode(type, payload);
    flush();
  }
  // Writes what the client's socket takes now (non-blocking).
  void flush()
  {
    while (!outbox.empty() && !client_gone) {
      auto n = platform::send_nosignal(fd, outbox.data(), outbox.size(), MSG_DONTWAIT);
      if (n > 0) {
        outbox.erase(0, static_cast<std::size_t>(n));
        sent_at = SteadyClock::now();
        continue;
      }
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      }
      client_gone = true; // the client went away
      outbox.clear();
      done = true;
    }
  }
  // Output waits while the client has this much not taken yet (the channel's window then fills
  // and the server stops sending: the stall stays with its command).
  bool output_backlogged() const { return outbox.size() > (4u << 20); }
  void finish_with(const Error& e)
  {
    send(Frame::error, hold::error_payload(e));
    done = true;
  }
};

class Holder {
public:
  Holder(Session& session, int listen_fd, std::string path, const hold::SocketFile& socket, std::chrono::seconds idle)
      : m_session(session), m_files(session), m_spare(session.get()), m_listen(listen_fd), m_path(std::move(path)),
        m_socket(socket), m_idle(idle)
  {}

  void run()
  {
    std::signal(SIGTERM, on_stop);
    std::signal(SIGINT, on_stop);
    std::signal(SIGHUP, SIG_IGN);
    std::signal(SIGPIPE, SIG_IGN);
    auto last_busy = SteadyClock::now();
    auto last_keepalive = SteadyClock::now();
    m_spare.refill(false);
    while (!g_stop && !m_quit) {
      std::vector<pollfd> fds{{m_listen, POLLIN, 0}, {ssh_get_fd(m_session.get()), POLLIN, 0}};
      for (auto& job : m_jobs) {
        const short in = backlogged(*job) || job->done ? 0 : POLLIN;
        fds.push_back({job->fd, static_cast<short>(in | (job->outbox.empty() ? 0 : POLLOUT)), 0});
      }
      const bool busy =
          std::any_of(m_jobs.begin(), m_jobs.end(), [](const auto& j) { return j->channel || j->stream || j->queued; });
      ::poll(fds.data(), fds.size(), busy ? 10 : 500);
      if (fds[1].revents & POLLIN) {
        m_spare.pump();
      }
      if (fds[0].revents & POLLIN) {
        accept_client();
      }
      for (auto& job : m_jobs) {
        job->flush();
        read_client(*job);
      }
      for (auto& job : m_jobs) {
        if (!job->done) {
          step(*job);
        }
      }
      const auto before = m_jobs.size();
      m_jobs.remove_if([](const auto& j) { return j->done && !lingers(*j); });
      if (m_jobs.size() != before) {
        m_spare.resume();
      }
      // A channel closed (its slot is free), or a refusal with none of ours open: the server may
      // not have freed the slots of channels just closed; tried again every 50 ms.
      if (any_queued() &&
          (m_jobs.size() != before || SteadyClock::now() - m_last_retry >= std::chrono::milliseconds(50))) {
        m_last_retry = SteadyClock::now();
        retry_queued();
      }
      m_spare.refill(any_queued()); // off the commands' path: only sends the open
      if (!m_jobs.empty()) {
        last_busy = SteadyClock::now();
      }
      if (ssh_is_connected(m_session.get()) == 0) {
        spdlog::warn("held connection to {}: the session ended (network drop or server)", m_session.label());
        break;
      }
      if (m_jobs.empty() && SteadyClock::now() - last_keepalive > std::chrono::seconds(30)) {
        // Notices a dead network while idle: the write fails once TCP gives up.
        if (ssh_send_ignore(m_session.get(), "") != SSH_OK) {
          break;
        }
        last_keepalive = SteadyClock::now();
      }
      if (m_jobs.empty() && SteadyClock::now() - last_busy >= m_idle) {
        spdlog::info("held connection to {}: idle for {} s, ending", m_session.label(), m_idle.count());
        break;
      }
    }
    withdraw();
    for (auto& job : m_jobs) {
      let_go(*job, "the held connection ended before sending the command");
    }
    drain();
    turn_away_waiting();
  }

private:
  void accept_client()
  {
    int fd = platform::cloexec_accept(m_listen, false);
    if (fd < 0) {
      return;
    }
    if (const auto peer = platform::peer_uid(fd); !peer || *peer != ::getuid()) {
      spdlog::warn("held connection: refused a client of uid {} (only uid {} may use it)",
                   peer ? std::to_string(*peer) : "unknown", ::getuid());
      ::close(fd);
      return;
    }
    auto job = std::make_unique<Job>();
    job->fd = fd;
    m_jobs.push_back(std::move(job));
    ++m_served;
  }

  // A job that ended keeps its socket until the client has taken its last frames (its end or
  // error), for at most 30 s of the client taking nothing; its channel is closed meanwhile.
  static bool lingers(Job& job)
  {
    if (job.outbox.empty() || job.client_gone || SteadyClock::now() - job.sent_at > std::chrono::seconds(30)) {
      return false;
    }
    job.hook.remove();
    job.channel.reset();
    job.stream.reset();
    return true;
  }

  // A client whose stdin the channel has not taken yet is not read further (rsync may send
  // faster than the server's window allows): the socket's buffer holds the rest.
  static bool backlogged(const Job& job) { return job.input.size() > (4u << 20); }

  void read_client(Job& job)
  {
    char buf[65536];
    while (!job.done && !backlogged(job)) {
      auto n = ::recv(job.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        job.inbox.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        abandon(job); // the client is gone (done, interrupted or timed out): stop its command
      }
      break;
    }
    while (!job.done) {
      auto frame = hold::decode(job.inbox);
      if (!frame) {
        job.finish_with(frame.error());
        return;
      }
      if (!*frame) {
        return;
      }
      handle(job, **frame);
    }
  }

  void abandon(Job& job)
  {
    if (job.channel && ssh_channel_is_open(job.channel.get())) {
      ssh_channel_request_send_signal(job.channel.get(), "TERM");
    }
    job.done = true;
  }

  void handle(Job& job, const hold::Decoded& frame)
  {
    switch (frame.type) {
    case Frame::request: {
      job.request = json::parse(frame.payload, nullptr, false);
      if (!job.request.is_object()) {
        job.finish_with(Error{ErrorCode::io, "held connection: an unreadable request", ""});
        return;
      }
      start(job);
      return;
    }
    case Frame::input:
      job.input.append(frame.payload);
      return;
    case Frame::input_end:
      job.input_end = true;
      return;
    case Frame::winsize: {
      int cols = 0;
      int rows = 0;
      if (std::sscanf(frame.payload.c_str(), "%d %d", &cols, &rows) == 2 && job.channel) {
        ssh_channel_change_pty_size(job.channel.get(), cols, rows);
      }
      return;
    }
    default:
      job.finish_with(Error{ErrorCode::io, "held connection: an unexpected frame", ""});
    }
  }

  bool any_queued() const
  {
    return std::any_of(m_jobs.begin(), m_jobs.end(), [](const auto& j) { return j->queued && !j->done; });
  }

  int open_channels() const
  {
    return static_cast<int>(
        std::count_if(m_jobs.begin(), m_jobs.end(), [](const auto& j) { return j->channel || j->stream; }));
  }

  void start(Job& job)
  {
    const auto op = job.request.value("op", "");
    if (op == "hello" || op == "status") {
      json r{{"label", m_session.label()},  {"user", m_session.user()},
             {"pid", ::getpid()},           {"started", static_cast<long long>(m_started)},
             {"channels", open_channels()}, {"clients", static_cast<int>(m_jobs.size()) - 1},
             {"served", m_served},          {"idle_limit_s", m_idle.count()},
             {"spare", m_spare.open()},     {"spare_used", m_spare_used},
             {"spare_lost", m_spare_lost}};
      job.send(Frame::reply, r.dump());
      job.done = true;
      return;
    }
    if (op == "quit") {
      job.send(Frame::reply, "{}");
      job.done = true;
      m_quit = true;
      return;
    }
    if (op == "put" || op == "get" || op == "link") {
      files(job, op);
      return;
    }
    if (op == "exec" || op == "pty" || op == "forward") {
      open(job);
      return;
    }
    job.finish_with(Error{ErrorCode::usage, fmt::format("held connection: unknown request '{}'", op), ""});
  }

  void files(Job& job, const std::string& op)
  {
    const auto& r = job.request;
    Result<std::uint64_t> bytes = 0;
    if (op == "put") {
      FileMeta meta{r.value("mode", 0644u), r.value("mtime", std::int64_t{0})};
      bytes = m_files.put_file(r.value("local", ""), r.value("remote", ""), meta);
    } else if (op == "get") {
      bytes = m_files.get_file(r.value("remote", ""), r.value("local", ""));
    } else {
      auto linked = m_files.put_symlink(r.value("target", ""), r.value("remote", ""));
      bytes = linked ? Result<std::uint64_t>(0) : std::unexpected(linked.error());
    }
    if (!bytes) {
      job.finish_with(bytes.error());
      return;
    }
    job.send(Frame::end, json{{"bytes", *bytes}}.dump());
    job.done = true;
  }

  // Opens the job's channel; when the server refuses one while others are open (MaxSessions),
  // the job waits for one of them to close.
  void open(Job& job)
  {
    const auto op = job.request.value("op", "");
    if (op == "forward") {
      auto stream = open_forward(m_session, job.request.value("host", ""), job.request.value("port", 0));
      if (!stream) {
        return refused(job, stream.error());
      }
      job.stream = std::move(*stream);
      job.queued = false;
      job.send(Frame::started, "");
      return;
    }
    // The spare first; one the server closed meanwhile fails its exec: then a channel of its own.
    for (bool spare : {true, false}) {
      ChannelPtr channel = spare ? m_spare.take() : nullptr;
      if (spare && !channel) {
        continue;
      }
      if (spare) {
        // The next spare's open goes out before this exec: both answers come in the same round
        // trip, so a command right after this one finds its spare open.
        m_spare.resume();
        m_spare.refill(any_queued());
      }
      if (!channel) {
        channel.reset(ssh_channel_new(m_session.get()));
        if (!channel || ssh_channel_open_session(channel.get()) != SSH_OK) {
          return refused(job, m_session.failure(ErrorCode::unreachable, "cannot open a channel"));
        }
      }
      const int rc = run_on(job, channel.get());
      if (rc != SSH_OK) {
        job.hook.remove(); // the channel is freed below, the job lives on
      }
      if (rc == SSH_OK) {
        m_spare_used += spare ? 1 : 0;
        job.channel = std::move(channel);
        job.queued = false;
        job.send(Frame::started, "");
        m_spare.resume();
        return;
      }
      if (job.exec_sent) {
        const bool answered_no = rc == SSH_ERROR && (ssh_get_error_code(m_session.get()) == SSH_REQUEST_DENIED ||
                                                     ssh_channel_is_closed(channel.get()) != 0);
        if (exec_failure(ssh_is_connected(m_session.get()) != 0, answered_no) == ExecFailure::may_have_run) {
          spdlog::warn("held connection to {}: no answer to a command's exec ({}): it may have run, not sent again",
                       m_session.label(), rc == SSH_AGAIN ? "none in time" : "the session ended");
          job.finish_with(hold::answer_lost(m_session.label()));
          return;
        }
        job.exec_sent = false; // the server said no: the command did not run
      }
      if (!spare) {
        job.finish_with(m_session.failure(ErrorCode::unreachable, "cannot run command"));
        return;
      }
      ++m_spare_lost;
      spdlog::debug("held connection: the spare channel was gone; opening one");
    }
  }

  // The job's pty (if asked) and exec on `channel`; each waits for the server's answer. libssh's
  // code (SSH_OK once the command started); `job.exec_sent` says whether the exec went out.
  int run_on(Job& job, ssh_channel channel)
  {
    job.hook.remove();
    job.callbacks = {};
    job.callbacks.userdata = &job.exit_signal;
    job.callbacks.channel_exit_signal_function = keep_exit_signal;
    ssh_callbacks_init(&job.callbacks);
    job.hook.set(channel, &job.callbacks);
    const auto line = job.request.value("line", "");
    if (job.request.value("op", "") == "pty" &&
        ssh_channel_request_pty_size(channel, job.request.value("term", "xterm").c_str(), job.request.value("cols", 80),
                                     job.request.value("rows", 24)) != SSH_OK) {
      return SSH_ERROR;
    }
    job.exec_sent = true;
    return ssh_channel_request_exec(channel, line.c_str());
  }

  // Removes the socket once, so that no new client reaches this holder; a new holder's socket at
  // the same path (this one was stopped, found stale and replaced) is left alone.
  void withdraw()
  {
    if (!m_withdrawn) {
      if (!hold::remove_own_socket(m_path, m_socket)) {
        spdlog::info("held connection: {} is no longer this holder's socket; left in place", m_path);
      }
      m_withdrawn = true;
    }
  }

  // A job the holder cannot serve further (its session ended, or the holder ends). One whose
  // command was never sent to the server is told `not_sent` (`why`): its client asks a new holder.
  // One whose exec went out, running or not yet answered, may have run: answer_lost (a repeatable
  // command is asked again, nothing else; docs/ssh.md, "Never run twice"). A forward just ends.
  void let_go(Job& job, std::string_view why)
  {
    if (job.done) {
      return;
    }
    if (job.channel || job.exec_sent) {
      job.finish_with(hold::answer_lost(m_session.label()));
    } else if (job.stream) {
      job.finish_with(ssh_failure(ErrorCode::unreachable, m_session.label(), "the held connection ended"));
    } else {
      job.send(Frame::not_sent, why);
      job.done = true;
    }
  }

  // As the holder ends: the frames still queued reach their clients (2 s at most in all), so that
  // each learns how its request ended (not_sent, may have run) rather than reading a reset.
  void drain()
  {
    const auto until = SteadyClock::now() + std::chrono::seconds(2);
    for (auto& job : m_jobs) {
      while (!job->outbox.empty() && !job->client_gone && SteadyClock::now() < until) {
        pollfd p{job->fd, POLLOUT, 0};
        ::poll(&p, 1, 100);
        job->flush();
      }
    }
  }

  // Clients that dialled the socket but were never accepted (the holder ends): told `not_sent`,
  // rather than left to a reset that would read as "may have run".
  void turn_away_waiting()
  {
    for (pollfd p{m_listen, POLLIN, 0}; ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);) {
      const int fd = platform::cloexec_accept(m_listen, false);
      if (fd < 0) {
        return;
      }
      hold::send_frame(fd, Frame::not_sent, "the held connection ended before sending the command");
      ::close(fd);
    }
  }

  void refused(Job& job, const Error& e)
  {
    if (ssh_is_connected(m_session.get()) == 0) {
      spdlog::warn("held connection to {}: the session ended (network drop or server); a new one takes the request",
                   m_session.label());
      withdraw();
      let_go(job, "the session ended before the command was sent");
      return;
    }
    // Refused while the session lives: MaxSessions. It waits for one of our channels to close;
    // with none open, for the server to free the slots of channels just closed (a close and the
    // next open can arrive in one read, before sshd frees the slot), at most 5 s.
    if (ssh_is_connected(m_session.get()) != 0) {
      if (!job.queued) {
        spdlog::debug("held connection: channel refused with {} open; queued", open_channels());
        job.queued = true;
        job.queued_since = SteadyClock::now();
      }
      if (open_channels() > 0 || SteadyClock::now() - job.queued_since < std::chrono::seconds(5)) {
        return;
      }
    }
    job.finish_with(e);
  }

  void retry_queued()
  {
    for (auto& job : m_jobs) {
      if (job->queued && !job->done) {
        open(*job);
        if (job->queued) {
          return; // still full
        }
      }
    }
  }

  void step(Job& job)
  {
    if (job.stream) {
      return step_stream(job);
    }
    if (!job.channel) {
      return;
    }
    ssh_channel ch = job.channel.get();
    if (!job.input.empty()) {
      auto chunk = std::min<std::size_t>({job.input.size(), ssh_channel_window_size(ch), 65536});
      if (chunk > 0) {
        int n = ssh_channel_write(ch, job.input.data(), static_cast<std::uint32_t>(chunk));
        if (n > 0) {
          job.input.erase(0, static_cast<std::size_t>(n));
        }
      } else {
        ssh_channel_poll(ch, 0);
      }
    }
    if (job.input_end && job.input.empty() && !job.eof_sent) {
      ssh_channel_send_eof(ch);
      job.eof_sent = true;
    }
    if (job.output_backlogged()) {
      return; // the client has not taken the output yet: none read (nor the end) until it has
    }
    char buf[65536];
    bool got = false;
    for (int is_stderr = 0; is_stderr < 2; ++is_stderr) {
      int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, is_stderr);
      if (n > 0) {
        got = true;
        job.send(is_stderr ? Frame::err : Frame::out, std::string_view(buf, static_cast<std::size_t>(n)));
      } else if (n == SSH_ERROR) {
        spdlog::warn("held connection to {}: a running command's channel failed ({})", m_session.label(),
                     ssh_get_error(m_session.get()));
        job.finish_with(hold::answer_lost(m_session.label()));
        return;
      }
    }
    if (!got && (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch))) {
      const int status = ssh_channel_get_exit_status(ch);
      job.send(Frame::end, json{{"exit", status}, {"signal", job.exit_signal}}.dump());
      job.hook.remove();
      job.channel.reset();
      job.done = true;
    }
  }

  void step_stream(Job& job)
  {
    if (!job.input.empty()) {
      auto n = job.stream->write_some(job.input.data(), job.input.size());
      if (n < 0) {
        job.send(Frame::end, "{}");
        job.stream.reset();
        job.done = true;
        return;
      }
      job.input.erase(0, static_cast<std::size_t>(n));
    }
    if (job.input_end && job.input.empty() && !job.eof_sent) {
      job.stream->close_write();
      job.eof_sent = true;
    }
    if (job.output_backlogged()) {
      return;
    }
    char buf[65536];
    auto n = job.stream->read_some(buf, sizeof buf);
    if (n > 0) {
      job.send(Frame::out, std::string_view(buf, static_cast<std::size_t>(n)));
    } else if (n < 0) {
      job.send(Frame::end, "{}");
      job.stream.reset();
      job.done = true;
    }
  }

  Session& m_session;
  SftpFiles m_files;
  SpareChannel m_spare;
  long m_spare_used = 0;
  SteadyClock::time_point m_last_retry{};
  long m_spare_lost = 0;
  int m_listen;
  std::string m_path;
  hold::SocketFile m_socket;
  bool m_withdrawn = false;
  std::chrono::seconds m_idle;
  std::list<std::unique_ptr<Job>> m_jobs;
  std::time_t m_started = std::time(nullptr);
  long m_served = 0;
  bool m_quit = false;
};

} // namespace

void serve_held_session(Session& session, int listen_fd, const std::string& socket_path, const hold::SocketFile& socket,
                        std::chrono::seconds idle)
{
  Holder(session, listen_fd, socket_path, socket, idle).run();
}

} // namespace rv::proc::ssh
