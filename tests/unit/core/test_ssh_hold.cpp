#include "core/process/ssh_hold_client.hpp"
#include "core/process/ssh_hold_protocol.hpp"
#include "core/process/ssh_hold_spare.hpp"

#include <doctest/doctest.h>

#include <string>

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
