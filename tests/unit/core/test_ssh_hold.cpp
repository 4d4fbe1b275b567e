#include "core/process/ssh_hold_client.hpp"
#include "core/process/ssh_hold_protocol.hpp"
#include "core/process/ssh_hold_spare.hpp"

#include "core/process/remote_files.hpp"
#include "slurm/jobs.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

using namespace rv;
using namespace rv::proc;
using namespace rv::proc::hold;

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
  CHECK(runtime_dir("/run/user/1000", 1000) == "/run/user/1000/rv");
  CHECK(runtime_dir("", 1000) == "/tmp/rv-1000");
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
  a.destination = "me@[::1]:22/../x";
  CHECK(socket_name(a).find('/') == std::string::npos);
  CHECK(socket_name(a).size() < 80); // fits sun_path with the directory
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

TEST_CASE("hold client: a holder that dies after `started` is `ended while running`; only a repeatable command is "
          "asked again")
{
  char dir_template[] = "/tmp/rv-hold-test-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/h.sock";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  // A holder that opens the channel, says so, then dies (its socket closes) before any `end`.
  std::string request;
  std::thread holder([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) {
      return;
    }
    std::string buffer;
    char chunk[4096];
    for (bool done = false; !done;) {
      const auto n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) {
        break;
      }
      buffer.append(chunk, static_cast<std::size_t>(n));
      while (auto frame = decode(buffer)) {
        if (!*frame) {
          break;
        }
        if ((*frame)->type == Frame::request) {
          request = (*frame)->payload;
        }
        done = done || (*frame)->type == Frame::input_end;
      }
    }
    send_frame(fd, Frame::started, "");
    ::close(fd);
  });
  Client client(path);
  Command cmd;
  cmd.timeout = std::chrono::seconds(10);
  auto got = client.exec("squeue --me", "", cmd);
  holder.join();
  ::close(listener);
  std::filesystem::remove_all(dir_template);
  CHECK(request.find("squeue --me") != std::string::npos);
  REQUIRE_FALSE(got);
  CHECK(got.error().code == ErrorCode::unreachable);
  CHECK(ended_while_running(got.error()));
  CHECK_FALSE(gone_before_start(got.error()));
  CHECK(may_ask_again(got.error(), true));
  CHECK_FALSE(may_ask_again(got.error(), false)); // sbatch may have run: never twice
  // Gone before the start: asked again whatever the command.
  auto gone = Client("/nonexistent-dir-rv-test/x.sock").exec("sbatch x", "", cmd);
  REQUIRE_FALSE(gone);
  CHECK(may_ask_again(gone.error(), false));
  CHECK_FALSE(ended_while_running(gone.error()));
}

TEST_CASE("repeatable commands: the race's and the follow's reads and waits are; a submission and a write are not")
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
