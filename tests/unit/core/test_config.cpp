#include "core/config.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace rv;

namespace {
std::string write_temp(const std::string& name, const std::string& text)
{
  auto dir = std::filesystem::temp_directory_path() / ("rv-test-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}
} // namespace

TEST_CASE("config layers: default < file < env < flag, with origins")
{
  Config c;
  CHECK(c.get("connect_timeout") == "15s");
  CHECK(c.origin("connect_timeout") == Origin::default_value);

  auto path = write_temp("layers.json", R"({"host": "from-file", "account": "acct-file", "max_strategies": 4})");
  REQUIRE(c.load_file(path));
  CHECK(c.get("host") == "from-file");
  CHECK(c.origin("host") == Origin::file);
  CHECK(c.get("max_strategies") == "4");

  REQUIRE(c.load_env({{"RV_HOST", "from-env"}, {"UNRELATED", "x"}}));
  CHECK(c.get("host") == "from-env");
  CHECK(c.origin("host") == Origin::environment);
  CHECK(c.get("account") == "acct-file");

  REQUIRE(c.set("host", "from-flag", Origin::flag));
  CHECK(c.get("host") == "from-flag");
  CHECK(std::string(to_string(c.origin("host"))) == "flag");
}

TEST_CASE("config: a missing file is fine, a broken one is a clear error")
{
  Config c;
  CHECK(c.load_file("/nonexistent/rv/config.json"));
  auto bad = write_temp("bad.json", "{ host: nope");
  auto r = c.load_file(bad);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::config);
  CHECK(r.error().message.find("bad.json") != std::string::npos);
  CHECK_FALSE(r.error().hint.empty());

  auto list = write_temp("list.json", "[1, 2]");
  CHECK_FALSE(c.load_file(list));
  auto nested = write_temp("nested.json", R"({"host": {"a": 1}})");
  CHECK_FALSE(c.load_file(nested));
}

TEST_CASE("config: a number too large for a double is an error, not a crash (found by fuzzing, #15)")
{
  Config c;
  auto huge = write_temp("huge.json", R"({"time": 1e999})");
  auto r = c.load_file(huge);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::config);
  CHECK(r.error().message.find("huge.json") != std::string::npos);
}

TEST_CASE("config: unknown keys get a did-you-mean")
{
  Config c;
  auto r = c.set("hots", "x", Origin::flag);
  REQUIRE_FALSE(r);
  CHECK(r.error().hint.find("'host") != std::string::npos); // host or hosts: both one edit away
  auto path = write_temp("typo.json", R"({"acount": "x"})");
  auto f = c.load_file(path);
  REQUIRE_FALSE(f);
  CHECK(f.error().hint.find("account") != std::string::npos);
}

TEST_CASE("config: every value is checked against its key's type when set")
{
  Config c;
  CHECK(*c.get_seconds("connect_timeout") == 15);
  auto r = c.set("connect_timeout", "soon", Origin::environment);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "connect_timeout 'soon' is not a duration");
  CHECK(*c.get_seconds("connect_timeout") == 15); // unchanged
  CHECK(c.set("max_strategies", "4", Origin::file));
  CHECK(c.set("max_strategies", "65", Origin::file).error().message ==
        "max_strategies '65' is not a whole number from 1 to 64");
  CHECK_FALSE(c.set("max_strategies", "4.5", Origin::file));
  CHECK(c.set("checkpoint", "true", Origin::file));
  CHECK(c.set("checkpoint", "yes", Origin::file).error().message == "checkpoint 'yes' is not true or false");
  CHECK(c.set("deps_install", "pip", Origin::flag).error().message == "deps_install 'pip' is not login, job or off");
  CHECK_FALSE(c.set("sync_max_file_size", "big", Origin::file));
  CHECK(c.set("sync_max_file_size", "0", Origin::file));
  CHECK_FALSE(c.load_env({{"RV_TIME_SCALE", "0"}}));
  // A number from a JSON file is checked as its text.
  CHECK_FALSE(c.load_file(write_temp("typed.json", R"({"max_strategies": 0})")));
}

// #24 item 12: {"host": 5}, notify_webhook ftp://x and notify_email notanemail were accepted;
// connect_timeout 0s was "not a duration".
TEST_CASE("config: a text key takes no number, and addresses are checked when set")
{
  Config c;
  auto host = c.load_file(write_temp("host5.json", R"({"host": 5})"));
  REQUIRE_FALSE(host);
  CHECK(host.error().message.ends_with(": 'host' must be a string, not 5"));
  CHECK(c.load_file(write_temp("count.json", R"({"max_strategies": 4, "checkpoint": true})")));
  CHECK(c.set("notify_webhook", "ftp://x", Origin::file).error().message ==
        "notify_webhook 'ftp://x' is not an http(s) URL");
  CHECK(c.set("notify_webhook", "https://hooks.example.org/rv", Origin::file));
  CHECK(c.set("notify_email", "notanemail", Origin::file).error().message ==
        "notify_email 'notanemail' is not an e-mail address");
  CHECK_FALSE(c.set("notify_email", "a@b, c@d", Origin::file));
  CHECK(c.set("notify_email", "ada@example.org", Origin::file));
  CHECK(c.set("notify_email", "", Origin::file)); // unset
  auto zero = c.set("connect_timeout", "0s", Origin::flag);
  REQUIRE_FALSE(zero);
  CHECK(zero.error().message == "connect_timeout '0s' must be longer than 0");
}

TEST_CASE("config: rv config show --json gives numbers and booleans their JSON types")
{
  CHECK(config_value_json(**find_config_key("max_strategies"), "8") == nlohmann::json(8));
  CHECK(config_value_json(**find_config_key("checkpoint"), "false") == nlohmann::json(false));
  CHECK(config_value_json(**find_config_key("host"), "8") == nlohmann::json("8"));
  CHECK(config_value_json(**find_config_key("connect_timeout"), "15s") == nlohmann::json("15s"));
}

TEST_CASE("config: rv config set|unset write the file atomically, typed, keeping the other keys")
{
  const auto path = write_temp("set.json", R"({"host": "login.example.edu", "max_strategies": 99})");
  REQUIRE(write_config_value(path, "max_strategies", "4")); // repairs a bad value, keeps host
  REQUIRE(write_config_value(path, "checkpoint", "true"));
  Config c;
  REQUIRE(c.load_file(path));
  CHECK(c.get("host") == "login.example.edu");
  CHECK(c.get("max_strategies") == "4");
  std::ifstream in(path);
  auto doc = nlohmann::json::parse(in);
  CHECK(doc["max_strategies"] == 4); // a number, not "4"
  CHECK(doc["checkpoint"] == true);
  CHECK(std::filesystem::status(path).permissions() ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));

  auto bad = write_config_value(path, "max_strategies", "lots");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "max_strategies 'lots' is not a whole number from 1 to 64");
  auto unknown = write_config_value(path, "max_strategy", "4");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().hint == "did you mean 'max_strategies'?");

  REQUIRE(write_config_value(path, "host", std::nullopt));
  Config after;
  REQUIRE(after.load_file(path));
  CHECK(after.get("host").empty());
  CHECK(after.origin("host") == Origin::default_value);
  CHECK(after.get("max_strategies") == "4");

  const auto fresh = (std::filesystem::path(path).parent_path() / "new" / "config.json").string();
  REQUIRE(write_config_value(fresh, "time_scale", "60")); // the file and its directory are created
  CHECK(std::filesystem::exists(fresh));
}

TEST_CASE("did_you_mean")
{
  CHECK(did_you_mean("a10", {"a100", "v100", "h200"}) == "a100");
  CHECK(did_you_mean("zzzzzz", {"a100", "v100"}).empty());
}

TEST_CASE("config: a malformed file's error quotes the position, not the JSON library's exception tag")
{
  auto path = std::filesystem::temp_directory_path() / ("rv-config-bad-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << "{\"host\": \"a\",\n  oops}";
  Config c;
  auto r = c.load_file(path.string());
  std::filesystem::remove(path);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::config);
  CHECK(r.error().message.find("[json.exception") == std::string::npos);
  CHECK(r.error().message.find("line 2") != std::string::npos);
}
