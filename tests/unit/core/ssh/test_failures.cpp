#include "core/ssh/failures.hpp"

#include <doctest/doctest.h>
#include <libssh/sftp.h>

#include <string>

using namespace rv;
using namespace rv::proc;

namespace {

bool contains(const std::string& text, std::string_view part)
{
  return text.find(part) != std::string::npos;
}

const char* const label = "rvtest@127.0.0.1:2222";
const char* const fingerprint = "SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";

} // namespace

TEST_CASE("ssh_failure: one shape, `ssh LABEL: WHAT[: WHY]`, with the code and hint given")
{
  auto e = ssh_failure(ErrorCode::unreachable, label, "connection lost", "Socket error: disconnected", "retry");
  CHECK(e.code == ErrorCode::unreachable);
  CHECK(e.message == "ssh rvtest@127.0.0.1:2222: connection lost: Socket error: disconnected");
  CHECK(e.hint == "retry");

  e = ssh_failure(ErrorCode::timeout, label, "a batch of 3 commands timed out");
  CHECK(e.message == "ssh rvtest@127.0.0.1:2222: a batch of 3 commands timed out");
  CHECK(e.hint.empty());
}

TEST_CASE("host_key_verdict: only a known key is trusted, each refusal has its exit code")
{
  CHECK(host_key_verdict(KnownHost::ok, label, fingerprint, ""));

  struct Case {
    KnownHost state;
    int exit_code;
    const char* says;
  };
  for (const auto& c :
       {Case{KnownHost::changed, 252, "CHANGED"}, Case{KnownHost::other_type, 252, "another type"},
        Case{KnownHost::not_found, 253, "not in known_hosts"}, Case{KnownHost::unknown, 253, "not in known_hosts"}}) {
    CAPTURE(c.says);
    auto r = host_key_verdict(c.state, label, fingerprint, "");
    REQUIRE_FALSE(r);
    CHECK(exit_code_for(r.error().code) == c.exit_code);
    CHECK(contains(r.error().message, c.says));
    CHECK(r.error().message.starts_with("ssh rvtest@127.0.0.1:2222: "));
    CHECK(contains(r.error().message, fingerprint)); // the user can compare it with the admins' one
    CHECK_FALSE(r.error().hint.empty());
    if (c.exit_code == 253) { // a hint that can work: rv init records the key (N8; --known-hosts FILE could not)
      CHECK(contains(r.error().hint, "rv init"));
      CHECK_FALSE(contains(r.error().hint, "--known-hosts"));
    }
  }

  auto r = host_key_verdict(KnownHost::error, label, "?", "Error opening known_hosts: Permission denied");
  REQUIRE_FALSE(r);
  CHECK(exit_code_for(r.error().code) == 253);
  CHECK(r.error().message ==
        "ssh rvtest@127.0.0.1:2222: cannot check the host key: Error opening known_hosts: Permission denied");
}

TEST_CASE("connect_failure: unreachable (255), the hint depends on whether it timed out")
{
  auto refused = connect_failure(label, "Connection refused");
  CHECK(exit_code_for(refused.code) == 255);
  CHECK(refused.message == "ssh rvtest@127.0.0.1:2222: cannot connect: Connection refused");
  CHECK(contains(refused.hint, "VPN"));

  for (const char* slow : {"Timeout connecting to 10.0.0.1", "Connection timed out"}) {
    CAPTURE(slow);
    auto e = connect_failure(label, slow);
    CHECK(exit_code_for(e.code) == 255);
    CHECK(contains(e.hint, "--connect-timeout"));
  }
}

TEST_CASE("auth_failure: every key refused is exit 254 with a hint, libssh's text only when it has one")
{
  auto e = auth_failure(label, "");
  CHECK(exit_code_for(e.code) == 254);
  CHECK(e.message == "ssh rvtest@127.0.0.1:2222: the host refused every key (agent, config IdentityFile, defaults)");
  CHECK(contains(e.hint, "ssh-add"));

  e = auth_failure(label, "Access denied");
  CHECK(e.message.ends_with("defaults): Access denied"));
}

TEST_CASE("sftp_status_text names the common statuses, else libssh's session error")
{
  CHECK(sftp_status_text(SSH_FX_NO_SUCH_FILE, "x") == "no such file or directory");
  CHECK(sftp_status_text(SSH_FX_PERMISSION_DENIED, "x") == "permission denied");
  CHECK(sftp_status_text(SSH_FX_FAILURE, "Socket error: disconnected") == "Socket error: disconnected");
}

TEST_CASE("signal_number maps remote exit-signal names")
{
  CHECK(signal_number("") == 0);
  CHECK(signal_number("TERM") == 15);
  CHECK(signal_number("KILL") == 9);
  CHECK(signal_number("SEGV") == 11);
  CHECK(signal_number("USR1") == 10);
  CHECK(signal_number("WINCH") == 255); // one rv does not know
}

TEST_CASE("classify_connect_error: libssh's texts for DNS, refused, timeout and no route, hints per problem")
{
  CHECK(classify_connect_error("Failed to resolve hostname nosuch.invalid (Name or service not known)") ==
        ConnectProblem::dns);
  CHECK(classify_connect_error("Failed to resolve hostname x (Temporary failure in name resolution)") ==
        ConnectProblem::dns);
  CHECK(classify_connect_error("Connection refused") == ConnectProblem::refused);
  CHECK(classify_connect_error("Timeout connecting to 10.255.255.1") == ConnectProblem::timeout);
  CHECK(classify_connect_error("No route to host") == ConnectProblem::no_route);
  CHECK(classify_connect_error("Network is unreachable") == ConnectProblem::no_route);
  CHECK(classify_connect_error("something else") == ConnectProblem::other);
  CHECK(std::string(to_string(ConnectProblem::dns)) == "dns");
  CHECK(contains(connect_failure(label, "Failed to resolve hostname h (Name or service not known)").hint,
                 "does not resolve"));
  CHECK(contains(connect_failure(label, "Failed to resolve hostname h (Name or service not known)").hint, "VPN"));
  CHECK(contains(connect_failure(label, "Connection refused").hint, "nothing listens"));
  CHECK(contains(connect_failure(label, "No route to host").hint, "VPN"));
}
