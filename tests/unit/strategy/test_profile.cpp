#include "strategy/profile.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::strategy;

TEST_CASE("profile: the shipped example parses")
{
  std::ifstream in(RV_SOURCE_DIR "/docs/profile.example.json");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  auto p = parse_profile(text.str());
  REQUIRE_MESSAGE(p, (p ? "" : p.error().message));
  CHECK(p->aliases.contains("a100"));
  CHECK(p->su_per_billing_hour > 0);
}

TEST_CASE("profile: fields land in the struct")
{
  auto p = test::campus_profile();
  CHECK(p.default_account == "lab");
  CHECK(p.aliases.at("a100").constraint == "gpupod&a100_80gb");
  CHECK(p.aliases.at("hopper").types == std::vector<std::string>{"h200"});
  CHECK(p.find("v100")->vram_gb == 32);
  CHECK(*p.find("v100")->su_per_gpu_hour == doctest::Approx(20.96));
  CHECK(p.find("1g.10gb")->free);
  CHECK(p.find("nope") == nullptr);
}

TEST_CASE("profile: validation errors name the key")
{
  struct Case {
    const char* json;
    const char* message;
    const char* hint;
  };
  for (const auto& c : std::initializer_list<Case>{
           {"{", "not valid JSON", ""},
           {"[]", "must be a JSON object", ""},
           {R"({"su_per_biling_hour": 2})", "unknown key 'su_per_biling_hour'", "su_per_billing_hour"},
           {R"({"types": {"a100": {"vram_gbs": 80}}})", "types.a100: unknown key 'vram_gbs'", "vram_gb"},
           {R"({"types": {"a100": {"vram_gb": "80"}}})", "types.a100.vram_gb: must be a whole number", ""},
           {R"({"su_per_billing_hour": -1})", "must be a number >= 0", ""},
           {R"({"mig_pattern": "(["})", "not a valid regular expression", ""},
           {R"({"aliases": {"x": {}}})", "aliases.x: names no types", ""},
           {R"({"version": 2})", "unsupported version 2", ""},
       }) {
    CAPTURE(c.json);
    auto p = parse_profile(c.json);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == ErrorCode::config);
    CHECK(p.error().message.find(c.message) != std::string::npos);
    CHECK(p.error().hint.find(c.hint) != std::string::npos);
  }
}
