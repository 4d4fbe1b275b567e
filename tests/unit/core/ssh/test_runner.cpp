#include "core/ssh/exec.hpp"
#include "core/ssh/handles.hpp"
#include "core/ssh/hold.hpp"
#include "core/ssh/runner.hpp"
#include "unit/core/ssh/fake_holder.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

using namespace rv;
using namespace rv::proc;
using namespace std::chrono_literals;

TEST_CASE("batch_envelope: no limit unless a command has one, interruptible unless all are not")
{
  auto command = [](std::chrono::milliseconds timeout) {
    Command c;
    c.argv = {"x"};
    c.timeout = timeout;
    return c;
  };
  auto a = command(0ms);
  auto b = command(10s);
  auto c = command(2s);

  auto whole = ssh::batch_envelope({a});
  CHECK(whole.timeout == 0ms);
  CHECK_FALSE(whole.uninterruptible);

  whole = ssh::batch_envelope({a, b, c});
  CHECK(whole.timeout == 10s + 5s + 2s + 5s);

  a.uninterruptible = b.uninterruptible = true;
  CHECK(ssh::batch_envelope({a, b}).uninterruptible);
  CHECK_FALSE(ssh::batch_envelope({a, b, c}).uninterruptible);
}

namespace {
int g_freed = 0;
void count_free(int*)
{
  ++g_freed;
}
} // namespace

TEST_CASE("ssh handles: a Freer frees once, a UniqueFd closes once")
{
  g_freed = 0;
  int dummy = 0;
  {
    std::unique_ptr<int, ssh::Freer<count_free>> owner(&dummy);
    auto moved = std::move(owner);
  }
  CHECK(g_freed == 1);
  {
    std::unique_ptr<int, ssh::Freer<count_free>> empty;
  }
  CHECK(g_freed == 1); // unique_ptr never frees null

  int raw = -1;
  {
    ssh::UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    REQUIRE(fd);
    raw = fd.get();
    CHECK(fd.close());
    CHECK(fd.close()); // a second close is a no-op, not a close of someone else's fd
  }
  errno = 0;
  CHECK(::fcntl(raw, F_GETFD) == -1);
  CHECK(errno == EBADF);
}

TEST_CASE("SshRunner: a refused connection is exit 255 named by host, and the next call tries again")
{
  // Port 1 on the loopback is closed: no server, no known_hosts, no key are needed.
  SshOptions options;
  options.destination = "nobody@127.0.0.1:1";
  options.known_hosts = "/dev/null";
  options.connect_timeout = 3s;
  SshRunner runner(options);
  Command cmd;
  cmd.argv = {"true"};
  for (int attempt = 0; attempt < 2; ++attempt) {
    CAPTURE(attempt);
    auto r = runner.run(cmd);
    REQUIRE_FALSE(r);
    CHECK(exit_code_for(r.error().code) == 255);
    CHECK(r.error().message.starts_with("ssh nobody@127.0.0.1:1: cannot connect: "));
  }
  CHECK(runner.where() == "ssh nobody@127.0.0.1:1");
  CHECK(runner.user().empty());
  CHECK(runner.round_trips() == 0);
  CHECK_FALSE(runner.put_file("/dev/null", "/tmp/x", FileMeta{}));
}

TEST_CASE("SshRunner: a malformed destination is a usage error before any connection")
{
  SshOptions options;
  options.destination = "user@";
  SshRunner runner(options);
  auto r = runner.connect();
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::usage);
  CHECK(runner.where() == "ssh user@");
}

TEST_CASE("SshRunner: an ssh config libssh cannot parse is a config error on every call, never half-connected")
{
  char path[] = "/tmp/rv-ssh-config-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string bad = "Match nosuchcriterion\n";
  REQUIRE(::write(fd, bad.data(), bad.size()) == static_cast<ssize_t>(bad.size()));
  ::close(fd);

  SshOptions options;
  options.destination = "cluster-alias";
  options.ssh_config = path;
  SshRunner runner(options);
  // The session of the failed attempt is freed: a second call fails the same way instead of
  // running commands on a session that never connected.
  for (int attempt = 0; attempt < 2; ++attempt) {
    CAPTURE(attempt);
    auto r = runner.connect();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::config);
    CHECK(r.error().message.starts_with(std::string("ssh cluster-alias: cannot parse ssh config ") + path + ": "));
    CHECK(r.error().message.find("Match") != std::string::npos); // libssh's own text
  }
  ::unlink(path);
}

namespace {

// Options for a login node nobody serves (port 1 on the loopback is closed): a direct session to
// it fails at once, so a command that succeeds went through the fake holder.
SshOptions unreachable(const std::string& root, std::chrono::seconds persist)
{
  SshOptions o;
  o.destination = "rvtest@127.0.0.1:1";
  o.known_hosts = "/dev/null";
  o.connect_timeout = 3s;
  o.runtime_dir = root + "/run";
  o.persist = persist;
  return o;
}

// A temp dir for the holders' runtime dir, and the socket the held connection of `options` listens on.
struct HeldWorld {
  std::string root;
  SshOptions options;
  std::string socket;
  HeldWorld()
  {
    char root_template[] = "/tmp/rv-runner-test-XXXXXX";
    REQUIRE(::mkdtemp(root_template) != nullptr);
    root = root_template;
    options = unreachable(root, 30min);
    auto path = hold::socket_path(options);
    REQUIRE(path);
    socket = *path;
  }
  ~HeldWorld() { std::filesystem::remove_all(root); }
  HeldWorld(const HeldWorld&) = delete;
  HeldWorld& operator=(const HeldWorld&) = delete;
};

} // namespace

TEST_CASE("SshRunner: with a live holder every command goes through it, the direct session never opened")
{
  HeldWorld w;
  {
    test::FakeHolder holder({test::FakeHolder::Answer::ok}, w.socket);
    SshRunner runner(w.options);
    Command cmd;
    cmd.argv = {"echo", "hi"};
    cmd.timeout = 10s;
    auto r = runner.run(cmd);
    REQUIRE(r);
    CHECK(r->out == "ran\n");
    CHECK(runner.held());
    CHECK(runner.not_held_reason().empty());
    CHECK(holder.requests == 1);
    CHECK(holder.last_line.find("echo hi") != std::string::npos);
    // The holder's names, not the session's: nothing here asked the unreachable host.
    CHECK(runner.where() == "ssh fake@holder:22");
    CHECK(runner.user() == "fake");
    CHECK(runner.run(cmd));
    CHECK(holder.requests == 2);
    CHECK(runner.round_trips() == 2);
  }
}

TEST_CASE("SshRunner: connection_persist 0 never asks a holder, even a live one for the same options")
{
  HeldWorld w;
  {
    test::FakeHolder holder({test::FakeHolder::Answer::ok}, w.socket);
    auto o = w.options;
    o.persist = 0s; // (the socket name does not hash persist: the holder is the one it would find)
    REQUIRE(*hold::socket_path(o) == w.socket);
    SshRunner runner(o);
    Command cmd;
    cmd.argv = {"true"};
    auto r = runner.run(cmd);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.starts_with("ssh rvtest@127.0.0.1:1: cannot connect: ")); // the direct session's
    CHECK_FALSE(runner.held());
    CHECK(runner.not_held_reason() == "connection_persist is 0");
    CHECK(holder.hellos == 0);
    CHECK(holder.requests == 0);
  }
}

TEST_CASE("SshRunner: a lost holder is replaced and a repeatable command asked again, any other command "
          "is never sent twice (docs/ssh.md, \"Never run twice\")")
{
  using A = test::FakeHolder::Answer;
  HeldWorld w;
  {
    // The first exec's answer is lost after it was sent; the holder then answers again.
    test::FakeHolder holder({A::close, A::ok}, w.socket);
    SshRunner runner(w.options);
    Command read;
    read.argv = {"cat", "log"};
    read.timeout = 10s;
    read.repeatable = true;
    auto r = runner.run(read);
    REQUIRE(r);
    CHECK(r->out == "ran\n");
    CHECK(holder.requests == 2); // asked once more, on the holder found again
    CHECK(runner.held());
  }
  {
    test::FakeHolder holder({A::close, A::ok}, w.socket);
    SshRunner runner(w.options);
    Command submit;
    submit.argv = {"sbatch", "job.sh"};
    submit.timeout = 10s;
    auto r = runner.run(submit);
    REQUIRE_FALSE(r);
    CHECK(holder.requests == 1); // may have run: never sent again
    CHECK(runner.held());
    CHECK(runner.run(submit)); // the next command goes on through the holder
    CHECK(holder.requests == 2);
  }
}
