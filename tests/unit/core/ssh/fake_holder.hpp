#pragma once
// A fake holder of the held connection (core/ssh/hold_server.hpp) on a Unix socket, for the unit
// tests of the client, the runner and rsync's relay: it answers a hello, counts the exec requests
// it receives and answers each as told.

#include "core/ssh/hold_protocol.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace rv::test {

// A Unix socket bound at `path` (not listening yet).
inline int bind_unix(const std::string& path)
{
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Listens on `at` (or a socket in a temp dir of its own) and answers the n-th exec connection as
// `answers[n]` says (the last one for every later connection); a hello or status gets the label
// `fake@holder:22` and the user `fake`.
class FakeHolder {
public:
  enum class Answer {
    close,         // reads the request and its input, then closes without a word (SIGKILL, a crash)
    started_close, // says `started`, then closes (died while the command ran)
    not_sent,      // says it never sent the command
    ok,            // runs it: `started`, "ran\n" on stdout, exit 0
  };
  explicit FakeHolder(std::vector<Answer> answers, std::string at = {}) : m_answers(std::move(answers))
  {
    if (at.empty()) {
      char dir_template[] = "/tmp/rv-hold-test-XXXXXX";
      REQUIRE(::mkdtemp(dir_template) != nullptr);
      m_dir = dir_template;
      at = m_dir + "/h.sock";
    }
    path = at;
    m_listener = bind_unix(path);
    REQUIRE(::listen(m_listener, 4) == 0);
    m_thread = std::thread([this] { serve(); });
  }
  ~FakeHolder()
  {
    m_stop = true;
    m_thread.join();
    ::close(m_listener);
    if (!m_dir.empty()) {
      std::filesystem::remove_all(m_dir);
    } else {
      ::unlink(path.c_str());
    }
  }
  FakeHolder(const FakeHolder&) = delete;
  FakeHolder& operator=(const FakeHolder&) = delete;

  std::string path;
  std::atomic<int> requests{0}; // exec requests received, whatever the answer
  std::atomic<int> hellos{0};   // hello and status requests
  std::string last_line;        // the last request's command line

private:
  void serve()
  {
    for (std::size_t n = 0; !m_stop;) {
      pollfd p{m_listener, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) {
        continue;
      }
      const int fd = ::accept(m_listener, nullptr, nullptr);
      if (fd < 0) {
        continue;
      }
      if (answer(fd, m_answers[std::min(n, m_answers.size() - 1)])) {
        ++n;
      }
      ::close(fd);
    }
  }
  // Answers one connection; whether it was an exec request.
  bool answer(int fd, Answer how)
  {
    using proc::hold::Frame;
    std::string buffer;
    char chunk[4096];
    for (bool done = false; !done;) {
      const auto got = ::read(fd, chunk, sizeof chunk);
      if (got <= 0) {
        break;
      }
      buffer.append(chunk, static_cast<std::size_t>(got));
      while (auto frame = proc::hold::decode(buffer)) {
        if (!*frame) {
          break;
        }
        if ((*frame)->type == Frame::request) {
          const auto request = nlohmann::json::parse((*frame)->payload);
          if (request.value("op", "") != "exec") {
            ++hellos;
            proc::hold::send_frame(fd, Frame::reply, R"({"label":"fake@holder:22","user":"fake"})");
            return false;
          }
          last_line = request.value("line", "");
          ++requests;
        }
        done = done || (*frame)->type == Frame::input_end;
      }
    }
    switch (how) {
    case Answer::close:
      return true;
    case Answer::started_close:
      proc::hold::send_frame(fd, Frame::started, "");
      return true;
    case Answer::not_sent:
      proc::hold::send_frame(fd, Frame::not_sent, "the session ended before the command was sent");
      return true;
    case Answer::ok:
      proc::hold::send_frame(fd, Frame::started, "");
      proc::hold::send_frame(fd, Frame::out, "ran\n");
      proc::hold::send_frame(fd, Frame::end, R"({"exit":0,"signal":""})");
      return true;
    }
    return true;
  }

  std::vector<Answer> m_answers;
  std::string m_dir;
  int m_listener = -1;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

} // namespace rv::test
