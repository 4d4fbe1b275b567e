// --notify's plan: HMAC-SHA256 (RFC 4231), the per-request key, and the config errors.

#include "app/run/launch/notify.hpp"
#include "sync/hash.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;
using rv::sync::hmac_sha256_hex;

TEST_CASE("hmac_sha256_hex: RFC 4231 test cases 2 and 6 (a key longer than the block)")
{
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("plan_notify: mail and webhook, the job gets the URL and a per-request key, never the secret")
{
  Settings s;
  CHECK(plan_notify(s, "sec", "r1").error().code == ErrorCode::config);
  s.notify_email = "alice@example.org";
  auto mail = plan_notify(s, "", "r1");
  REQUIRE(mail.has_value());
  CHECK(mail->mail_user == "alice@example.org");
  CHECK_FALSE(mail->webhook);
  CHECK(mail->secrets_lines.empty());

  s.notify_webhook = "https://hooks.example.org/x?a=1&b='2'";
  CHECK(plan_notify(s, "", "r1").error().hint.find("RV_WEBHOOK_SECRET") != std::string::npos);
  auto hook = plan_notify(s, "top-secret", "r1");
  REQUIRE(hook.has_value());
  CHECK(hook->webhook);
  CHECK(hook->secrets_lines.find("_rv_notify_url='https://hooks.example.org/x?a=1&b='\\''2'\\'''\n") !=
        std::string::npos);
  CHECK(hook->secrets_lines.find("_rv_notify_key=" + hmac_sha256_hex("top-secret", "r1") + "\n") != std::string::npos);
  CHECK(hook->secrets_lines.find("top-secret") == std::string::npos);
  CHECK(hmac_sha256_hex("top-secret", "r1") != hmac_sha256_hex("top-secret", "r2"));

  for (const char* bad : {"ftp://x", "hooks.example.org", "https://x/\nInjected: 1", "https://x/ y"}) {
    s.notify_webhook = bad;
    CHECK(plan_notify(s, "sec", "r1").error().code == ErrorCode::config);
  }
}

// N11: http:// URLs were accepted silently.
TEST_CASE("plan_notify: plain http to another host is allowed but warned about, loopback is not")
{
  CHECK(loopback_url("http://127.0.0.1:8080/hook"));
  CHECK(loopback_url("http://localhost/hook"));
  CHECK(loopback_url("http://[::1]:9/x"));
  CHECK_FALSE(loopback_url("http://127.0.0.1.evil.example/hook"));
  CHECK_FALSE(loopback_url("http://localhost.example.org/"));
  CHECK_FALSE(loopback_url("http://hooks.example.org/x"));
  CHECK_FALSE(loopback_url("https://hooks.example.org/x"));
}
