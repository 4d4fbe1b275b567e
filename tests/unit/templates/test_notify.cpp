// --notify in the job scripts: Slurm mail lines, the webhook functions and their calls, the
// HMAC computed in bash (RFC 4231 vectors), hostile values quoted, bad inputs refused.

#include "exec_fixture.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <vector>

using namespace rv::templates;
using namespace rv::templates::testing;

namespace {

bool has(const std::string& text, const std::string& part)
{
  return text.find(part) != std::string::npos;
}

RenderOptions notifying(RenderOptions o)
{
  o.secrets_file = "/scratch/alice/.rv/requests/r1/env";
  o.notify_webhook = true;
  o.notify_mail_user = "alice@example.org";
  return o;
}

} // namespace

TEST_CASE("notify: single, multi-node and checkpoint scripts send start and end, and parse")
{
  ExecFixture fx;
  for (int kind = 0; kind < 3; ++kind) {
    auto s = base_strategy();
    if (kind == 1) {
      s.nodes = 2;
    } else if (kind == 2) {
      s.kind = rv::model::StrategyKind::checkpoint;
      s.total_time_s = 6 * 3600;
    }
    auto o = notifying(base_options());
    o.strategy_count = 1;
    auto script = render(s, base_request(), o);
    REQUIRE(script.has_value());
    CAPTURE(kind);
    CHECK(has(*script, "#SBATCH --mail-type=\"BEGIN,END,FAIL,REQUEUE\""));
    CHECK(has(*script, "#SBATCH --mail-user=\"alice@example.org\""));
    CHECK(has(*script, "_rv_notify start RUNNING\n"));
    CHECK(has(*script, "_rv_notify_end \"$_rv_status\"\n"));
    CHECK(has(*script, "_rv_hmac_sha256() {"));
    CHECK(has(*script, "trap '_rv_notify end TERMINATED 143; exit 143' TERM") == (kind != 2));
    CHECK(has(*script, "_rv_notify resubmitted REQUEUED") == (kind == 2));
    CHECK_FALSE(has(*script, "_rv_notify_url='")); // the URL lives in the secrets file only
    // The start event comes after the secrets file is sourced (it holds the URL and the key).
    CHECK(script->find("_rv_notify start") > script->find("then . /scratch/alice/.rv/requests/r1/env;"));
    auto file = fx.write_script("notify" + std::to_string(kind), *script);
    CHECK(ExecFixture::sh("bash -n '" + file + "'") == 0);
  }
}

TEST_CASE("notify: a fan-out turns Slurm mail on in the winner only, a hostile address stays one word")
{
  ExecFixture fx;
  auto o = notifying(base_options());
  o.notify_webhook = false;
  o.notify_mail_user = "a'b\"$(touch pwned)`x`@example.org";
  o.strategy_count = 3;
  auto script = render(base_strategy(), base_request(), o);
  REQUIRE(script.has_value());
  CHECK_FALSE(has(*script, "--mail-type"));
  CHECK(has(*script, "MailUser='a'\\''b\"$(touch pwned)`x`@example.org' MailType=END,FAIL,REQUEUE"));
  CHECK_FALSE(has(*script, "_rv_notify start"));
  CHECK(ExecFixture::sh("bash -n '" + fx.write_script("fanout", *script) + "'") == 0);
  // The guard decides first: the mail is turned on after it.
  CHECK(script->find("scontrol update JobId") > script->find("_rv_guard"));
}

TEST_CASE("notify: a line break in the address, or a webhook without the secrets file, is refused")
{
  auto o = notifying(base_options());
  o.notify_mail_user = "a@b\n#SBATCH --uid=0";
  auto bad = render(base_strategy(), base_request(), o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(has(bad.error().message, "mail user"));
  o = notifying(base_options());
  o.secrets_file.clear();
  bad = render(base_strategy(), base_request(), o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(has(bad.error().message, "secrets file"));
}

TEST_CASE("notify: the script's HMAC-SHA256 in bash matches RFC 4231")
{
  ExecFixture fx;
  auto script = render(base_strategy(), base_request(), notifying(base_options()));
  REQUIRE(script.has_value());
  const auto begin = script->find("_rv_hmac_sha256() {");
  const auto end = script->find("\n}\n", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  rv::testing::write_text(fx.path("hmac.sh"), script->substr(begin, end + 3 - begin));
  struct Vector {
    std::string key_hex, data, mac;
  };
  const Vector vectors[] = {
      // RFC 4231 test case 1: key 0x0b x 20, "Hi There".
      {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      // Test case 2: key "Jefe".
      {"4a656665", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      // Test case 4: key 0x01..0x19, data 0xcd x 50 (bytes that are not ASCII).
      {"0102030405060708090a0b0c0d0e0f10111213141516171819", std::string(50, '\xcd'),
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
  };
  int i = 0;
  for (const auto& v : vectors) {
    CAPTURE(v.key_hex);
    auto data = fx.path("data" + std::to_string(i));
    rv::testing::write_text(data, v.data);
    auto out = fx.path("mac" + std::to_string(i++));
    REQUIRE(ExecFixture::sh("bash -c '. \"$0\"; _rv_hmac_sha256 \"$1\" <\"$2\" >\"$3\"' '" + fx.path("hmac.sh") + "' " +
                            v.key_hex + " '" + data + "' '" + out + "'") == 0);
    CHECK(rv::testing::read_text(out) == v.mac + "\n");
  }
}

// N11: the documented verifier derived the key from the unsigned X-Rv-Request header and never
// compared it with the body's request_id, and nothing told two deliveries of the same event from a
// replay. Each event now carries a random event_id, in the signed body and in X-Rv-Event-Id.
TEST_CASE("notify: each event is signed with its request and a fresh event id, also in the headers")
{
  ExecFixture fx;
  auto script = render(base_strategy(), base_request(), notifying(base_options()));
  REQUIRE(script.has_value());
  const auto begin = script->find("# ---- notifications");
  const auto end = script->find("_rv_notify_end() {");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  rv::testing::write_text(fx.path("notify.sh"),
                          "_rv_log() { printf 'rv: %s\\n' \"$*\" >&2; }\n" + script->substr(begin, end - begin));
  // A stand-in curl: records its arguments and the body file, answers 204.
  std::filesystem::create_directories(fx.dir / "bin");
  rv::testing::write_text(fx.path("bin/curl"), "#!/bin/bash\n"
                                               "n=$(ls '" +
                                                   fx.path("") +
                                                   "' | grep -c '^args')\n"
                                                   "printf '%s\\n' \"$@\" >'" +
                                                   fx.path("") +
                                                   "args'$n\n"
                                                   "for a in \"$@\"; do case $a in @*) cat \"${a#@}\" >'" +
                                                   fx.path("") +
                                                   "body'$n ;; esac; done\n"
                                                   "cat >/dev/null; printf 204\n");
  std::filesystem::permissions(fx.dir / "bin" / "curl", std::filesystem::perms::owner_all);
  const std::string key(64, 'a');
  REQUIRE(ExecFixture::sh("env -i PATH='" + fx.path("bin") +
                          ":/usr/bin:/bin' RV_REQUEST_ID=r1 SLURM_JOB_ID=42 bash -c "
                          "'. \"$0\"; _rv_notify_url=https://hooks.example.org/x; _rv_notify_key=" +
                          key + "; _rv_notify start RUNNING; _rv_notify start RUNNING' '" + fx.path("notify.sh") +
                          "' 2>'" + fx.path("err") + "'") == 0);
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    const auto body = nlohmann::json::parse(rv::testing::read_text(fx.path("body" + std::to_string(i))));
    const auto args = rv::testing::read_text(fx.path("args" + std::to_string(i)));
    const std::string id = body.value("event_id", "");
    CAPTURE(args);
    CHECK(id.size() == 16);
    CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(body["request_id"] == "r1");
    CHECK(has(args, "X-Rv-Event-Id: " + id + "\n"));
    CHECK(has(args, "X-Rv-Request: r1\n"));
    ids.push_back(id);
  }
  CHECK(ids[0] != ids[1]); // a replay of the first is told from the second
  CHECK(has(rv::testing::read_text(fx.path("err")), "notification 'start' sent"));
}
