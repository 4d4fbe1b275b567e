#include "core/ssh/exec.hpp"
#include "core/ssh/handles.hpp"
#include "core/ssh/runner.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

using namespace rv;
using namespace rv::proc;
using namespace std::chrono_literals;

TEST_CASE("batch_envelope: no limit unless a command has one; interruptible unless all are not")
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
