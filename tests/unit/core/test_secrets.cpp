#include "core/secrets.hpp"
#include "fakes/processes.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace rv::secrets;
namespace fs = std::filesystem;

namespace {
fs::path fresh_file(const char* name)
{
  auto dir = fs::temp_directory_path() / fmt::format("rv-secrets-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  return dir / "secrets.json";
}

// What sh makes of the env script: each variable printed with printf '%s\0'.
std::string sh_reads(const std::string& script, const std::vector<std::string>& names)
{
  auto path = fs::temp_directory_path() / fmt::format("rv-secrets-sh-{}.sh", ::getpid());
  std::string body = script;
  for (const auto& n : names) {
    body += fmt::format("printf '%s\\0' \"${}\"\n", n);
  }
  std::ofstream(path) << body;
  std::string out;
  FILE* p = ::popen(fmt::format("sh {}", path.string()).c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[256];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    out.append(buf, n);
  }
  CHECK(::pclose(p) == 0);
  fs::remove(path);
  return out;
}
} // namespace

TEST_CASE("secrets: names")
{
  CHECK(validate_name("HF_TOKEN"));
  CHECK(validate_name("_x1"));
  CHECK_FALSE(validate_name(""));
  CHECK_FALSE(validate_name("1ABC"));
  CHECK_FALSE(validate_name("A-B"));
  CHECK_FALSE(validate_name("A B"));
  auto slurm = validate_name("SLURM_JOB_ID");
  REQUIRE_FALSE(slurm);
  CHECK(slurm.error().message.find("reserved") != std::string::npos);
  CHECK_FALSE(validate_name("RV_COMMAND"));
  CHECK_FALSE(validate_name("PATH"));
  CHECK_FALSE(validate_name("LD_PRELOAD"));
}

TEST_CASE("secrets: .env files as people write them")
{
  const std::string text = "# tokens\n"
                           "\n"
                           "HF_TOKEN=hf_abc123\n"
                           "export WANDB_API_KEY = 'w$x`y\"z' # inline comment after quotes\n"
                           "OPENAI_API_KEY=\"sk-1\\n2\\\"3\\\\4\\$5\"\n"
                           "BARE=value with spaces # comment\n"
                           "HASH=a#b\n"
                           "MULTI=\"line1\nline2\"\n"
                           "EMPTY=\n"
                           "HF_TOKEN=hf_last_wins\r\n";
  auto vars = parse_dotenv(text);
  REQUIRE(vars);
  REQUIRE(vars->size() == 7);
  CHECK((*vars)[0] == Var{"HF_TOKEN", "hf_last_wins"});
  CHECK((*vars)[1] == Var{"WANDB_API_KEY", "w$x`y\"z"});
  CHECK((*vars)[2] == Var{"OPENAI_API_KEY", "sk-1\n2\"3\\4$5"});
  CHECK((*vars)[3] == Var{"BARE", "value with spaces"});
  CHECK((*vars)[4] == Var{"HASH", "a#b"});
  CHECK((*vars)[5] == Var{"MULTI", "line1\nline2"});
  CHECK((*vars)[6] == Var{"EMPTY", ""});
}

TEST_CASE("secrets: bad .env lines name the line")
{
  auto no_eq = parse_dotenv("A=1\nnot a pair\n");
  REQUIRE_FALSE(no_eq);
  CHECK(no_eq.error().message.find("line 2") != std::string::npos);
  auto open_quote = parse_dotenv("A=1\nB=\"never closed\nC=3\n");
  REQUIRE_FALSE(open_quote);
  CHECK(open_quote.error().message.find("line 2") != std::string::npos);
  CHECK(open_quote.error().message.find("never closed") != std::string::npos);
  auto bad_name = parse_dotenv("\n\n3X=1\n");
  REQUIRE_FALSE(bad_name);
  CHECK(bad_name.error().message.find("line 3") != std::string::npos);
  auto trailing = parse_dotenv("A='x' y\n");
  REQUIRE_FALSE(trailing);
  CHECK(trailing.error().message.find("after the quoted value") != std::string::npos);
  CHECK_FALSE(parse_dotenv("SLURM_JOB_ID=1\n"));
}

TEST_CASE("secrets: masking shows at most 4 characters, and only of long values")
{
  CHECK(mask("short") == "**** (5 chars)");
  CHECK(mask("hf_0123456789abcdefghij") == "hf_0**** (23 chars)");
  CHECK(mask("") == "**** (0 chars)");
}

TEST_CASE("secrets: the env script gives sh every byte back")
{
  std::vector<Var> vars = {
      {"A", "plain"}, {"B", "it's \"quoted\" $HOME `id` \\n"}, {"C", "two\nlines\n"}, {"D", "; rm -rf / #"}};
  auto got = sh_reads(env_script(vars), {"A", "B", "C", "D"});
  std::string expected;
  for (const auto& v : vars) {
    expected += v.value + '\0';
  }
  CHECK(got == expected);
}

TEST_CASE("secrets: the store is 0600, keeps values exactly, and refuses an open file")
{
  auto path = fresh_file("store");
  Store s(path);
  auto empty = s.load();
  REQUIRE(empty);
  CHECK(empty->empty());
  REQUIRE(s.set({{"B_TOKEN", "b\n'\"$"}, {"A_KEY", "a"}}));
  REQUIRE(s.set({{"A_KEY", "a2"}}));
  auto vars = s.load();
  REQUIRE(vars);
  REQUIRE(vars->size() == 2);
  CHECK((*vars)[0] == Var{"A_KEY", "a2"}); // sorted by name
  CHECK((*vars)[1] == Var{"B_TOKEN", "b\n'\"$"});
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  auto missing = s.remove({"A_KEY", "NOPE"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "no secret named NOPE, so nothing was removed (A_KEY kept)");
  CHECK(s.load()->size() == 2); // nothing removed
  REQUIRE(s.remove({"A_KEY"}));
  CHECK(s.load()->size() == 1);
  CHECK_FALSE(s.set({{"PATH", "/tmp"}}));

  // A binary value (not UTF-8) is kept byte for byte instead of throwing while writing.
  const std::string binary("\xff\xfe\x01", 3);
  REQUIRE(s.set({{"BIN_TOKEN", binary}}));
  auto with_bin = s.load();
  REQUIRE(with_bin);
  CHECK((*with_bin)[0] == Var{"BIN_TOKEN", binary});
  REQUIRE(s.remove({"BIN_TOKEN"}));

  ::chmod(path.c_str(), 0644);
  auto open = s.load();
  REQUIRE_FALSE(open);
  CHECK(open.error().hint.find("chmod 600") != std::string::npos);
  fs::remove_all(path.parent_path());
}

TEST_CASE("secrets: two processes setting at once lose nothing")
{
  auto path = fresh_file("race");
  rv::test::run_in_processes(4, [&](int k) {
    Store s(path);
    for (int i = 0; i < 10; ++i) {
      if (!s.set({{fmt::format("K{}_{}", k, i), "v"}})) {
        return false;
      }
    }
    return true;
  });
  auto vars = Store(path).load();
  REQUIRE(vars);
  CHECK(vars->size() == 40);
  fs::remove_all(path.parent_path());
}
