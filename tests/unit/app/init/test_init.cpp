// rv init's pure parts: the remote commands (the authorized_keys install run for real with sh
// against a temp HOME), scratch candidates, the answers' JSON.

#include "app/init/init.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace rv;
using namespace rv::app;

namespace {

std::string quote(const std::string& s)
{
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// Runs `cmd` with sh under HOME=home; returns stdout, sets `status`.
std::string run_with_home(const proc::Command& cmd, const std::string& home, int& status)
{
  std::string line = "HOME=" + quote(home);
  for (const auto& a : cmd.argv) {
    line += " " + quote(a);
  }
  const auto in = home + ".stdin", out = home + ".stdout";
  std::ofstream(in) << cmd.stdin_data.value_or("");
  int raw = std::system((line + " <" + quote(in) + " >" + quote(out)).c_str());
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string file_text(const std::string& path)
{
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int mode_of(const std::string& path)
{
  struct stat st {};
  ::stat(path.c_str(), &st);
  return static_cast<int>(st.st_mode & 0777);
}

} // namespace

TEST_CASE("install_key_command: adds once, 0700/0600, after a last line without newline; options and comments "
          "do not hide a key")
{
  const auto home = (std::filesystem::temp_directory_path() / ("rv-init-test-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(home);
  std::filesystem::create_directories(home);
  const std::string key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTests alice@laptop (rv init)";
  int status = -1;
  CHECK(run_with_home(install_key_command(key), home, status) == "added\n");
  CHECK(status == 0);
  const auto auth = home + "/.ssh/authorized_keys";
  CHECK(file_text(auth) == key + "\n");
  CHECK(mode_of(home + "/.ssh") == 0700);
  CHECK(mode_of(auth) == 0600);
  CHECK(run_with_home(install_key_command(key), home, status) == "present\n");
  CHECK(file_text(auth) == key + "\n");

  // The same key with options and another comment counts as present; a file without a final
  // newline gets one before a new key.
  std::ofstream(auth, std::ios::trunc) << "from=\"10.0.0.0/8\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTests x";
  CHECK(run_with_home(install_key_command(key), home, status) == "present\n");
  const std::string other = "ssh-ed25519 AAAAOtherKey bob";
  CHECK(run_with_home(install_key_command(other), home, status) == "added\n");
  CHECK(file_text(auth) ==
        "from=\"10.0.0.0/8\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTests x\n" + other + "\n");
  std::filesystem::remove_all(home);
  std::filesystem::remove(home + ".stdin");
  std::filesystem::remove(home + ".stdout");
}

TEST_CASE("scratch: candidates are absolute, deduplicated; the caches go below .cache/rv")
{
  CHECK(parse_scratch_candidates("/scratch/alice\n\n/scratch/alice\nrelative\n/gpfs/scratch/alice\n") ==
        std::vector<std::string>{"/scratch/alice", "/gpfs/scratch/alice"});
  CHECK(parse_scratch_candidates("").empty());
  CHECK(cache_root_on("/scratch/alice/") == "/scratch/alice/.cache/rv");
}

TEST_CASE("init answers: JSON round trip; no password field exists")
{
  InitAnswers a;
  a.host = "login.example.org";
  a.user = "alice";
  a.port = 2222;
  a.identity = "/home/alice/.ssh/id_ed25519";
  a.host_key = "SHA256:abc";
  a.account = "proj";
  a.scratch = "/scratch/alice";
  auto j = to_json(a);
  CHECK_FALSE(j.contains("password"));
  auto back = init_answers_from_json(j);
  CHECK(to_json(back) == j);
  CHECK(init_answers_from_json(nlohmann::json::array()).host.empty());
}

// N10: a wrongly typed init.json ("port": "22") made every rv init fail with "internal error".
TEST_CASE("init answers: a wrongly typed init.json loses only the fields it got wrong")
{
  auto a = init_answers_from_json(nlohmann::json{
      {"host", "login.example.org"}, {"port", "22"}, {"user", 7}, {"identity", nullptr}, {"account", "proj"}});
  CHECK(a.host == "login.example.org");
  CHECK(a.port == 0);
  CHECK(a.user.empty());
  CHECK(a.identity.empty());
  CHECK(a.account == "proj");
  CHECK(init_answers_from_json(nlohmann::json{{"port", 1e300}}).port == 0);
  CHECK(init_answers_from_json(nlohmann::json{{"port", 2222}}).port == 2222);
}

namespace {

// The key step's effects: which keys exist, and whether one was generated.
struct KeyWorld final : InitWorld {
  std::vector<std::string> files;
  std::vector<std::string> generated;
  std::unique_ptr<proc::SshBootstrap> bootstrap(const proc::SshOptions&) override { return nullptr; }
  std::unique_ptr<proc::Runner> runner(const proc::SshOptions&) override { return nullptr; }
  std::unique_ptr<proc::Runner> runner_from(std::unique_ptr<proc::SshBootstrap>, const proc::SshOptions&) override
  {
    return nullptr;
  }
  std::optional<std::string> find_key(const std::string&) override { return std::nullopt; }
  bool exists(const std::string& p) override { return std::find(files.begin(), files.end(), p) != files.end(); }
  Result<proc::KeyPair> read_key(const std::string& p) override
  {
    proc::KeyPair k;
    k.private_path = p;
    return k;
  }
  Result<proc::KeyPair> generate_key(const std::string& p, const std::string&) override
  {
    generated.push_back(p);
    proc::KeyPair k;
    k.private_path = p;
    k.generated = true;
    return k;
  }
  Result<void> remember(const InitAnswers&) override { return {}; }
  Result<void> set_config(const std::string&, const std::string&) override { return {}; }
};

struct ScriptedPrompter final : Prompter {
  bool answer = false;
  std::vector<std::string> asked;
  Result<std::string> ask(std::string_view, const std::string& d, std::string_view) override { return d; }
  Result<bool> confirm(std::string_view q, bool, std::string_view) override
  {
    asked.emplace_back(q);
    return answer;
  }
  Result<std::string> password(std::string_view, int) override { return fail(ErrorCode::auth_failed, "none"); }
  void say(std::string_view) override {}
};

} // namespace

// N10: `-i` naming a path that does not exist (a typo) silently generated a new key there and
// installed it on the cluster.
TEST_CASE("init key step: -i naming no file asks before it generates a key there")
{
  InitOptions o;
  o.identity = "/home/alice/.ssh/id_ed2559"; // mistyped
  o.ssh_dir = "/home/alice/.ssh";
  InitAnswers a;
  KeyWorld world;
  ScriptedPrompter prompter;
  proc::KeyPair pair;
  auto refused = key_step(o, a, world, prompter, pair);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::usage);
  CHECK(refused.error().message == "no key at /home/alice/.ssh/id_ed2559");
  REQUIRE(prompter.asked.size() == 1);
  CHECK(prompter.asked[0].find("There is no key at /home/alice/.ssh/id_ed2559") == 0);
  CHECK(world.generated.empty());

  prompter.answer = true; // meant: a new key there
  REQUIRE(key_step(o, a, world, prompter, pair));
  CHECK(world.generated == std::vector<std::string>{"/home/alice/.ssh/id_ed2559"});

  world.files = {o.identity}; // an existing key is used without a question
  world.generated.clear();
  prompter.asked.clear();
  REQUIRE(key_step(o, a, world, prompter, pair));
  CHECK(prompter.asked.empty());
  CHECK(world.generated.empty());

  o.interactive = false; // a script's -i: generated there, as documented
  world.files.clear();
  REQUIRE(key_step(o, a, world, prompter, pair));
  CHECK(prompter.asked.empty());
  CHECK(world.generated.size() == 1);
}

// N10: the private key was written before the .pub; a stale .pub made the first run fail after
// writing the private key, and every later run read the mismatched pair and installed the wrong key.
TEST_CASE("generate_ed25519: a stale .pub stops it before any private key is written")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("rv-keygen-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "id_ed25519.pub") << "ssh-ed25519 AAAAstale old@host\n";
  auto made = proc::generate_ed25519((dir / "id_ed25519").string(), "test");
  REQUIRE_FALSE(made);
  CHECK_FALSE(fs::exists(dir / "id_ed25519"));
  fs::remove(dir / "id_ed25519.pub");
  made = proc::generate_ed25519((dir / "id_ed25519").string(), "test");
  REQUIRE_MESSAGE(made, made.error().message);
  CHECK(fs::exists(dir / "id_ed25519"));
  CHECK(fs::exists(dir / "id_ed25519.pub"));
  fs::remove_all(dir);
}
