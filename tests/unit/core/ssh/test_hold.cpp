#include "core/ssh/failures.hpp"
#include "core/ssh/hold.hpp"
#include "core/ssh/hold_client.hpp"
#include "core/ssh/hold_protocol.hpp"
#include "core/ssh/hold_spare.hpp"
#include "core/ssh/session.hpp"
#include "unit/core/ssh/fake_holder.hpp"

#include "core/process/remote_files.hpp"
#include "slurm/jobs.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>

using namespace rv;
using namespace rv::proc;
using namespace rv::proc::hold;
using rv::test::bind_unix;
using rv::test::FakeHolder;

TEST_CASE("hold frames: encode then decode gives the frames back, one at a time, across partial reads")
{
  std::string wire = encode(Frame::request, R"({"op":"exec"})") + encode(Frame::input, std::string("a\0b", 3)) +
                     encode(Frame::input_end, "");
  CHECK(wire.size() == 5 + 13 + 5 + 3 + 5);
  std::string buffer;
  std::vector<Decoded> got;
  for (char c : wire) { // one byte at a time: a frame is taken only once complete
    buffer.push_back(c);
    auto d = decode(buffer);
    REQUIRE(d);
    if (*d) {
      got.push_back(**d);
    }
  }
  REQUIRE(got.size() == 3);
  CHECK(got[0].type == Frame::request);
  CHECK(got[0].payload == R"({"op":"exec"})");
  CHECK(got[1].payload == std::string("a\0b", 3));
  CHECK(got[2].type == Frame::input_end);
  CHECK(buffer.empty());
}

TEST_CASE("hold frames: a length past the limit is an error, not an allocation")
{
  std::string buffer = std::string(1, 'o') + std::string("\x7f\xff\xff\xff", 4);
  auto d = decode(buffer);
  REQUIRE_FALSE(d);
  CHECK(d.error().message.find("limit") != std::string::npos);
}

TEST_CASE("hold error frames carry code, message and hint")
{
  Error e{ErrorCode::auth_failed, "ssh rvtest@127.0.0.1:2223: the code was refused", "type it again"};
  auto back = error_from_payload(error_payload(e));
  CHECK(back.code == ErrorCode::auth_failed);
  CHECK(back.message == e.message);
  CHECK(back.hint == e.hint);
  CHECK(error_from_payload("not json").code == ErrorCode::io);
}

TEST_CASE("hold paths: a private runtime dir, a socket name per set of options")
{
  CHECK(runtime_dir("/run/user/1000", "/home/u/.local/state/rv") == "/run/user/1000/rv");
  CHECK(runtime_dir("", "/home/u/.local/state/rv") == "/home/u/.local/state/rv/hold");
  SshOptions a;
  a.destination = "rvtb-2fa";
  a.ssh_config = "/tmp/rv-testbed/ssh/config";
  SshOptions b = a;
  b.identity_file = "/home/u/.ssh/other";
  const auto name = socket_name(a);
  CHECK(name.starts_with("rvtb-2fa-"));
  CHECK(name.ends_with(".sock"));
  CHECK(name == socket_name(a)); // stable
  CHECK(name != socket_name(b)); // another key is another session
  // The alias comes back from the file name, whatever the hash (N12: rv disconnect ALIAS and
  // rv connect --status name holders by it); a name that is only a hash has none.
  CHECK(socket_destination(name) == "rvtb-2fa");
  CHECK(socket_destination(socket_name(b)) == "rvtb-2fa");
  CHECK(socket_destination("0123456789abcdef.sock").empty());
  CHECK(socket_destination("rvtb-0123456789abcdeX.sock").empty());
  CHECK(socket_destination("rvtb-0123456789abcdef.lock").empty());
  CHECK(socket_destination("a-b-c-0123456789abcdef.sock") == "a-b-c");
  a.destination = "me@[::1]:22/../x";
  CHECK(socket_name(a).find('/') == std::string::npos);
  CHECK(socket_name(a).size() < 80); // fits sun_path with the directory
  CHECK(socket_in("/run/user/1000/rv", a) == "/run/user/1000/rv/" + socket_name(a));
  const std::string deep = "/home/" + std::string(50, 'u') + "/.local/state/rv/hold"; // 77 bytes
  const auto short_path = socket_in(deep, a);
  CHECK(short_path.size() < 104); // macOS's sun_path is 104 bytes, Linux's 108
  CHECK(short_path.ends_with(".sock"));
  CHECK(short_path != socket_in(deep, b));
  CHECK(sockets_fit(deep));
  CHECK_FALSE(sockets_fit(deep + "/more/than/a/socket/can/hold"));
}

namespace {

// Sets (or, with nullptr, unsets) an environment variable for one test, then restores it.
class EnvVar {
public:
  EnvVar(const char* name, const char* value) : m_name(name)
  {
    if (const char* old = std::getenv(name)) {
      m_old = old;
    }
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~EnvVar() { m_old ? ::setenv(m_name, m_old->c_str(), 1) : ::unsetenv(m_name); }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

private:
  const char* m_name;
  std::optional<std::string> m_old;
};

std::string temp_dir()
{
  char dir_template[] = "/tmp/rv-hold-test-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  return dir_template;
}

unsigned mode_of(const std::string& path)
{
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

} // namespace

TEST_CASE("hold paths: with no XDG_RUNTIME_DIR the sockets live under rv's own state dir, never in a /tmp name "
          "another user could create first (security-review-3 S7)")
{
  const auto root = temp_dir();
  EnvVar xdg("XDG_RUNTIME_DIR", nullptr);
  EnvVar state("RV_STATE_DIR", (root + "/state/rv").c_str());
  auto dir = private_dir(SshOptions{});
  REQUIRE(dir);
  CHECK(*dir == root + "/state/rv/hold");
  CHECK(mode_of(*dir) == 0700);
  SshOptions o;
  o.destination = "rvtb";
  auto path = socket_path(o);
  REQUIRE(path);
  CHECK(path->starts_with(root + "/state/rv/hold/rvtb-"));
  std::filesystem::remove_all(root);
}

TEST_CASE("hold paths: a state dir too deep for a Unix socket falls back to a private mkdtemp dir, kept, and "
          "replaced once it is no longer private")
{
  const auto root = temp_dir();
  const auto state = root + "/" + std::string(100, 's');
  EnvVar xdg("XDG_RUNTIME_DIR", nullptr);
  EnvVar env("RV_STATE_DIR", state.c_str());
  auto dir = private_dir(SshOptions{});
  REQUIRE(dir);
  CHECK(dir->starts_with("/tmp/rv-"));
  CHECK(sockets_fit(*dir));
  CHECK(mode_of(*dir) == 0700);
  CHECK(mode_of(state + "/hold") == 0700);
  auto again = private_dir(SshOptions{}, false);
  REQUIRE(again);
  CHECK(*again == *dir);       // the same directory for every rv process
  ::chmod(dir->c_str(), 0755); // no longer private (or another user's): a new one
  auto next = private_dir(SshOptions{});
  REQUIRE(next);
  CHECK(*next != *dir);
  CHECK(mode_of(*next) == 0700);
  ::rmdir(dir->c_str());
  REQUIRE(::symlink(next->c_str(), (root + "/link").c_str()) == 0); // a symlink is never taken for a dir
  std::ofstream(state + "/hold/short-dir") << root << "/link\n";
  auto third = private_dir(SshOptions{});
  REQUIRE(third);
  CHECK(*third != root + "/link");
  ::rmdir(next->c_str());
  ::rmdir(third->c_str());
  std::filesystem::remove_all(root);
}

TEST_CASE("hold paths: the socket name covers the ssh config's bytes, not only its path (security-review-3 S10)")
{
  const auto root = temp_dir();
  SshOptions o;
  o.destination = "rvtb";
  o.runtime_dir = root + "/run";
  o.ssh_config = root + "/config";
  std::ofstream(o.ssh_config) << "Host rvtb\n  HostName 127.0.0.1\n  User ana\n";
  auto before = socket_path(o);
  REQUIRE(before);
  CHECK(*socket_path(o) == *before); // stable while the file is
  std::ofstream(o.ssh_config) << "Host rvtb\n  HostName 127.0.0.1\n  User bob\n";
  auto after = socket_path(o);
  REQUIRE(after);
  CHECK(*after != *before); // another account: another holder, not the old session
  CHECK(socket_name(o, "User ana") != socket_name(o, "User bob"));
  CHECK(socket_name(o) == socket_name(o, "")); // no config text: the name as before
  std::filesystem::remove_all(root);
}

TEST_CASE("held connection: a start lock another rv keeps (at a second-factor prompt) is waited for at most "
          "start_wait, then named as the reason (security-review-3 S10)")
{
  const auto root = temp_dir();
  SshOptions o;
  o.destination = "rvtest@127.0.0.1:1"; // never reached: the wait ends first
  o.runtime_dir = root + "/run";
  o.persist = std::chrono::minutes(30);
  o.start_wait = std::chrono::seconds(1);
  auto path = socket_path(o);
  REQUIRE(path);
  const int other = ::open((*path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(other >= 0);
  REQUIRE(::flock(other, LOCK_EX) == 0); // the other rv, waiting for its code
  ssh::Session session(o);
  auto held = std::async(std::launch::async, [&] { return held_connection(session, o); });
  const bool ended = held.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  ::close(other); // lets a waiter that never gives up go on (to a refused connection)
  CHECK(ended);
  auto r = held.get();
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::io); // the holding failed: rv connects directly, saying why
  CHECK(r.error().message.find("another rv has been starting the held connection to rvtest@127.0.0.1:1 for 1 s") !=
        std::string::npos);
  std::filesystem::remove_all(root);
}

TEST_CASE("hold client: a socket nobody listens on is `gone before start` (a new holder may be started)")
{
  auto fd = dial_unix("/nonexistent-dir-rv-test/x.sock");
  REQUIRE_FALSE(fd);
  CHECK(gone_before_start(fd.error()));
  Client client("/nonexistent-dir-rv-test/x.sock");
  auto hello = client.hello();
  REQUIRE_FALSE(hello);
  CHECK(gone_before_start(hello.error()));
  CHECK_FALSE(gone_before_start(Error{ErrorCode::unreachable, "ssh x: connection lost", ""}));
}

namespace {

// Runs `line` through ask_held as SshRunner does: a new holder is the same fake (or `next`).
struct Asked {
  Result<Outcome> result;
  int reconnects = 0;
};
Asked ask(Client& first, const std::string& line, bool repeatable, Client* next = nullptr)
{
  Command cmd;
  cmd.timeout = std::chrono::seconds(10);
  Asked a{Outcome{}, 0};
  a.result = ask_held(
      first, [&](Client& c) { return c.exec(line, "", cmd); }, repeatable,
      [&](const Error&) -> Result<Client*> {
        ++a.reconnects;
        return next ? next : &first;
      });
  return a;
}

} // namespace

TEST_CASE("hold client: a socket closed with no answer after the request was sent: `may have run`, never sent twice")
{
  using A = FakeHolder::Answer;
  for (auto how : {A::close, A::started_close}) { // killed before the exec's answer, or while it ran
    CAPTURE(static_cast<int>(how));
    FakeHolder holder({how, A::ok});
    Client client(holder.path);
    client.set_label("me@login:22");
    auto got = ask(client, "sbatch x", false);
    CHECK(holder.requests == 1); // not asked again: it may have run
    CHECK(got.reconnects == 0);
    REQUIRE_FALSE(got.result);
    CHECK(is_answer_lost(got.result.error()));
    CHECK_FALSE(gone_before_start(got.result.error()));
    CHECK(exit_code_for(got.result.error().code) == 255);
    CHECK(got.result.error().message ==
          "ssh me@login:22: the held connection ended after the command was sent: it may have run");
    CHECK(got.result.error().hint.starts_with("check whether it ran before running it again"));
  }
}

TEST_CASE("hold client: a repeatable command whose answer was lost is asked again, once, on a new holder")
{
  using A = FakeHolder::Answer;
  FakeHolder holder({A::close, A::ok});
  Client client(holder.path);
  auto got = ask(client, "squeue --me", true);
  CHECK(holder.requests == 2);
  CHECK(got.reconnects == 1);
  REQUIRE(got.result);
  CHECK(got.result->out == "ran\n");
  // Lost twice: the second loss is the answer (no loop).
  FakeHolder twice({A::close});
  Client again(twice.path);
  auto lost = ask(again, "squeue --me", true);
  CHECK(twice.requests == 2);
  REQUIRE_FALSE(lost.result);
  CHECK(is_answer_lost(lost.result.error()));
}

TEST_CASE("hold client: a holder's explicit `not_sent` is asked again, whatever the command")
{
  using A = FakeHolder::Answer;
  FakeHolder holder({A::not_sent, A::ok});
  Client client(holder.path);
  auto got = ask(client, "sbatch x", false);
  CHECK(holder.requests == 2); // the first holder never sent it to the server
  CHECK(holder.last_line == "sbatch x");
  CHECK(got.reconnects == 1);
  REQUIRE(got.result);
  CHECK(got.result->exit_code == 0);
}

TEST_CASE("hold client: a socket that cannot be dialled is asked again on a new holder, whatever the command")
{
  using A = FakeHolder::Answer;
  FakeHolder fresh({A::ok});
  Client dead("/nonexistent-dir-rv-test/x.sock");
  Client next(fresh.path);
  auto got = ask(dead, "sbatch x", false, &next);
  CHECK(got.reconnects == 1);
  CHECK(fresh.requests == 1);
  REQUIRE(got.result);
  CHECK(got.result->out == "ran\n");
  // The error a dial gives: `gone before start`.
  auto gone = dead.exec("sbatch x", "", Command{});
  REQUIRE_FALSE(gone);
  CHECK(gone_before_start(gone.error()));
  CHECK(may_ask_again(gone.error(), false));
  CHECK_FALSE(is_answer_lost(gone.error()));
}

// S3 (security-review-3): a holder stopped long enough to be found stale is replaced (its socket
// removed, a new holder bound at the same path); when it resumed and ended, it removed the
// successor's socket, leaving a holder nobody could reach.
TEST_CASE("hold socket: a holder removes its socket path only while the path is still its own")
{
  char dir_template[] = "/tmp/rv-hold-test-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/h.sock";
  const int old_fd = bind_unix(path);
  const auto old_file = socket_file(path);
  REQUIRE(old_file);
  REQUIRE(::unlink(path.c_str()) == 0); // found stale: the successor removes it and binds its own
  const int new_fd = bind_unix(path);
  const auto new_file = socket_file(path);
  REQUIRE(new_file);
  CHECK_FALSE(remove_own_socket(path, *old_file)); // the old holder ends: the successor's socket stays
  CHECK(socket_file(path).has_value());
  CHECK(remove_own_socket(path, *new_file));
  CHECK_FALSE(socket_file(path).has_value());
  CHECK_FALSE(remove_own_socket(path, *new_file)); // already gone
  ::close(old_fd);
  ::close(new_fd);
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("exec failure: only a server's `no` on a live session says the command did not run")
{
  CHECK(exec_failure(true, true) == ExecFailure::refused);
  CHECK(exec_failure(true, false) == ExecFailure::may_have_run); // no answer in time
  CHECK(exec_failure(false, true) == ExecFailure::may_have_run); // the session died with the request out
  CHECK(exec_failure(false, false) == ExecFailure::may_have_run);
}

TEST_CASE("repeatable commands: the race's and the follow's reads and waits are, a submission and a write are not")
{
  CHECK(slurm::patient_command({"squeue", "-j", "1"}).repeatable);
  CHECK(slurm::patient_command({"scancel", "1"}).repeatable);
  CHECK(slurm::concurrent_read({"sinfo"}).repeatable);
  CHECK(remote::read_command("/x").repeatable);
  CHECK(remote::read_from_command("/x", 10).repeatable);
  CHECK(remote::last_lines_command("/x", 5).repeatable);
  CHECK(remote::resolve_command({"~/x"}).repeatable);
  CHECK(remote::wait_for_growth_command({{"/x", 0}}, std::chrono::seconds(1)).repeatable);
  CHECK_FALSE(slurm::command({"sbatch", "--parsable"}).repeatable);
  CHECK_FALSE(remote::write_private_command("/x", "secret").repeatable);
  CHECK_FALSE(Command{}.repeatable);
}

TEST_CASE("spare channel plan: one opened ahead, none while a command waits for a slot, held back once lost")
{
  using rv::proc::ssh::SparePlan;
  SparePlan plan;
  CHECK(plan.should_open(false));
  CHECK_FALSE(plan.should_open(true)); // a command queued under MaxSessions gets the next slot
  plan.sent();
  CHECK(plan.phase() == SparePlan::Phase::opening);
  CHECK_FALSE(plan.should_open(false)); // one at a time
  plan.confirmed();
  CHECK_FALSE(plan.should_open(false));
  plan.taken();
  CHECK(plan.phase() == SparePlan::Phase::none);
  CHECK(plan.should_open(false)); // the next one right after a command took it

  // Refused (MaxSessions) or closed by the server (ChannelTimeout): no retry until a command's
  // channel starts or ends, so a server that keeps refusing is not asked in a loop.
  plan.sent();
  plan.lost();
  CHECK(plan.held_back());
  CHECK_FALSE(plan.should_open(false));
  plan.resume();
  CHECK(plan.should_open(false));
  CHECK_FALSE(plan.should_open(true));
}
