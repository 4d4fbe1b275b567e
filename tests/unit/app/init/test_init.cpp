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

TEST_CASE("install_key_command: adds once, 0700/0600, after a last line without newline, options and comments "
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

TEST_CASE("scratch: candidates are absolute, deduplicated, the caches go below .cache/rv")
{
  CHECK(parse_scratch_candidates("/scratch/alice\n\n/scratch/alice\nrelative\n/gpfs/scratch/alice\n") ==
        std::vector<std::string>{"/scratch/alice", "/gpfs/scratch/alice"});
  CHECK(parse_scratch_candidates("").empty());
  CHECK(cache_root_on("/scratch/alice/") == "/scratch/alice/.cache/rv");
}

TEST_CASE("init answers: JSON round trip, no password field exists")
{
  InitAnswers a;
  a.host = "login.example.org";
  a.user = "alice";
  a.port = 2222;
  a.identity = "/home/alice/.ssh/id_ed25519";
  a.host_key = "SHA256:abc";
  a.account = "proj";
  a.scratch = "/scratch/alice";
  a.generated_key = "/home/alice/.ssh/id_ed25519_rv";
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
  std::vector<std::string> passphrases; // one per generated key, "" = none
  std::optional<std::string> default_key;
  std::unique_ptr<proc::SshBootstrap> bootstrap(const proc::SshOptions&) override { return nullptr; }
  std::unique_ptr<proc::Runner> runner(const proc::SshOptions&) override { return nullptr; }
  std::unique_ptr<proc::Runner> runner_from(std::unique_ptr<proc::SshBootstrap>, const proc::SshOptions&) override
  {
    return nullptr;
  }
  std::optional<std::string> find_key(const std::string&) override { return default_key; }
  bool exists(const std::string& p) override { return std::find(files.begin(), files.end(), p) != files.end(); }
  Result<proc::KeyPair> read_key(const std::string& p) override
  {
    proc::KeyPair k;
    k.private_path = p;
    return k;
  }
  Result<proc::KeyPair> generate_key(const std::string& p, const std::string&, const std::string& passphrase) override
  {
    generated.push_back(p);
    passphrases.push_back(passphrase);
    proc::KeyPair k;
    k.private_path = p;
    k.generated = true;
    return k;
  }
  std::optional<std::string> read_text(const std::string&) override { return std::nullopt; }
  Result<void> append_text(const std::string&, const std::string&) override { return {}; }
  Result<void> remember(const InitAnswers&) override { return {}; }
  Result<void> set_config(const std::string&, const std::string&) override { return {}; }
};

struct ScriptedPrompter final : Prompter {
  bool answer = false;
  std::vector<std::string> asked;
  std::vector<std::string> secrets;      // typed at the hidden prompts, in order
  std::vector<std::string> secret_asked; // those prompts
  std::vector<std::string> said;
  Result<std::string> ask(std::string_view, const std::string& d, std::string_view) override { return d; }
  Result<bool> confirm(std::string_view q, bool, std::string_view) override
  {
    asked.emplace_back(q);
    return answer;
  }
  Result<std::string> password(std::string_view, int) override { return fail(ErrorCode::auth_failed, "none"); }
  Result<std::string> secret(std::string_view prompt) override
  {
    secret_asked.emplace_back(prompt);
    if (secrets.empty()) {
      return fail(ErrorCode::interrupted, "no answer (end of input)");
    }
    auto typed = secrets.front();
    secrets.erase(secrets.begin());
    return typed;
  }
  void say(std::string_view line) override { said.emplace_back(line); }
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

  prompter.answer = true;  // meant: a new key there
  prompter.secrets = {""}; // no passphrase
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

// N10: with no key of the user's, rv init wrote a key without a passphrase to ~/.ssh/id_ed25519,
// which then became every host's default key.
TEST_CASE("init key step: a new key goes to ~/.ssh/id_ed25519_rv (or the next free name), never a default name")
{
  InitOptions o;
  o.ssh_dir = "/home/alice/.ssh";
  ScriptedPrompter prompter;
  proc::KeyPair pair;
  {
    KeyWorld world;
    InitAnswers a;
    prompter.secrets = {""};
    auto step = key_step(o, a, world, prompter, pair);
    REQUIRE(step);
    CHECK(world.generated == std::vector<std::string>{"/home/alice/.ssh/id_ed25519_rv"});
    CHECK(a.identity == "/home/alice/.ssh/id_ed25519_rv");
    CHECK(a.generated_key == "/home/alice/.ssh/id_ed25519_rv");
    CHECK((*step)["passphrase"] == false);
  }
  {
    // id_ed25519 is there but is no file find_key takes (a dangling link), a stale .pub of rv's own
    // name, and a key at _rv2: the next free name, never one of those.
    KeyWorld world;
    world.files = {"/home/alice/.ssh/id_ed25519", "/home/alice/.ssh/id_ed25519_rv.pub",
                   "/home/alice/.ssh/id_ed25519_rv2"};
    InitAnswers a;
    prompter.secrets = {""};
    REQUIRE(key_step(o, a, world, prompter, pair));
    CHECK(world.generated == std::vector<std::string>{"/home/alice/.ssh/id_ed25519_rv3"});
  }
  {
    // An earlier run's key (init.json gone): used, nothing generated.
    KeyWorld world;
    world.files = {"/home/alice/.ssh/id_ed25519_rv", "/home/alice/.ssh/id_ed25519_rv.pub"};
    InitAnswers a;
    REQUIRE(key_step(o, a, world, prompter, pair));
    CHECK(world.generated.empty());
    CHECK(a.identity == "/home/alice/.ssh/id_ed25519_rv");
  }
  {
    // A default key of the user's is kept, as before.
    KeyWorld world;
    world.default_key = "/home/alice/.ssh/id_ed25519";
    world.files = {"/home/alice/.ssh/id_ed25519"};
    InitAnswers a;
    REQUIRE(key_step(o, a, world, prompter, pair));
    CHECK(world.generated.empty());
    CHECK(a.identity == "/home/alice/.ssh/id_ed25519");
    CHECK(a.generated_key.empty());
  }
}

TEST_CASE("init key step: the new key is offered a passphrase, typed twice, Enter alone is none, after a warning")
{
  InitOptions o;
  o.ssh_dir = "/home/alice/.ssh";
  proc::KeyPair pair;
  {
    KeyWorld world;
    ScriptedPrompter prompter;
    InitAnswers a;
    prompter.secrets = {"correct horse", "correct horse"};
    auto step = key_step(o, a, world, prompter, pair);
    REQUIRE(step);
    CHECK(world.passphrases == std::vector<std::string>{"correct horse"});
    CHECK((*step)["passphrase"] == true);
    CHECK(step->dump().find("correct horse") == std::string::npos);
    REQUIRE(prompter.secret_asked.size() == 2);
    CHECK(prompter.secret_asked[0] == "Passphrase for the new key /home/alice/.ssh/id_ed25519_rv (Enter: none)");
    CHECK(prompter.secret_asked[1] == "Same passphrase again");
    REQUIRE_FALSE(prompter.said.empty());
    CHECK(prompter.said[0] == "A key without a passphrase can be used by anyone who gets a copy of the file.");
  }
  {
    // Two that differ are asked again; three such pairs stop with nothing generated.
    KeyWorld world;
    ScriptedPrompter prompter;
    InitAnswers a;
    prompter.secrets = {"one", "two", "three", "three"};
    REQUIRE(key_step(o, a, world, prompter, pair));
    CHECK(world.passphrases == std::vector<std::string>{"three"});
    prompter.secrets = {"a", "b", "c", "d", "e", "f"};
    world.generated.clear();
    world.files.clear();
    auto refused = key_step(o, a, world, prompter, pair);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::usage);
    CHECK(refused.error().message.find("differed 3 times") != std::string::npos);
    CHECK(world.generated.empty());
  }
  {
    // --non-interactive asks nothing: no passphrase, and a line says so with what to do instead.
    KeyWorld world;
    ScriptedPrompter prompter;
    InitAnswers a;
    o.interactive = false;
    REQUIRE(key_step(o, a, world, prompter, pair));
    CHECK(prompter.secret_asked.empty());
    CHECK(world.passphrases == std::vector<std::string>{""});
    REQUIRE(prompter.said.size() == 2); // the warning, then "generated ..."
    CHECK(prompter.said[0].find("has no passphrase") != std::string::npos);
    CHECK(prompter.said[0].find("ssh-keygen") != std::string::npos);
  }
}

TEST_CASE("identity_config_block: a Host block naming the key, once, the user's lines kept as they are")
{
  const std::string key = "/home/alice/.ssh/id_ed25519_rv";
  CHECK(identity_config_block("", "hpc", key) == "# rv init: the key it generated for hpc (docs/init.md)\nHost hpc\n  "
                                                 "IdentityFile /home/alice/.ssh/id_ed25519_rv\n");
  // After a last line without newline: that line is ended first.
  CHECK(identity_config_block("Host other\n  User bob", "hpc", key).starts_with("\n\n# rv init"));
  CHECK(identity_config_block("Host other\n  User bob\n", "hpc", key).starts_with("\n# rv init"));
  // Already named for the host (any case, `=`, quotes, among other patterns): nothing to add.
  CHECK(identity_config_block("Host hpc\n  IdentityFile /home/alice/.ssh/id_ed25519_rv\n", "hpc", key).empty());
  CHECK(identity_config_block("host gpu hpc\n\tidentityfile=\"/home/alice/.ssh/id_ed25519_rv\"\n", "hpc", key).empty());
  // Named for another host, or under a Match, or only commented: added.
  CHECK_FALSE(identity_config_block("Host hpc2\n  IdentityFile /home/alice/.ssh/id_ed25519_rv\n", "hpc", key).empty());
  CHECK_FALSE(identity_config_block("Host hpc\n  User a\nMatch all\n  IdentityFile /home/alice/.ssh/id_ed25519_rv\n",
                                    "hpc", key)
                  .empty());
  CHECK_FALSE(identity_config_block("Host hpc\n# IdentityFile /home/alice/.ssh/id_ed25519_rv\n", "hpc", key).empty());
  // A path with a space is quoted, as OpenSSH reads it.
  CHECK(identity_config_block("", "hpc", "/home/a b/.ssh/id_ed25519_rv")
            .ends_with("IdentityFile \"/home/a b/.ssh/id_ed25519_rv\"\n"));
}

// N10: the passphrase reaches the file: OpenSSH's ssh-keygen reads the key with it, and not without.
TEST_CASE("generate_ed25519: a passphrase encrypts the key as OpenSSH reads it")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("rv-keygen-pp-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto key = (dir / "id_ed25519_rv").string();
  auto made = proc::generate_ed25519(key, "test", "s3cret words");
  REQUIRE_MESSAGE(made, made.error().message);
  CHECK(mode_of(key) == 0600);
  CHECK(file_text(key).find("s3cret") == std::string::npos);
  if (std::system("command -v ssh-keygen >/dev/null 2>&1") != 0) {
    MESSAGE("SKIP: no ssh-keygen to read the key back");
  } else {
    const auto read_with = [&](const std::string& pass) {
      return std::system(("ssh-keygen -y -P " + quote(pass) + " -f " + quote(key) + " >/dev/null 2>&1").c_str());
    };
    CHECK(read_with("s3cret words") == 0);
    CHECK(read_with("") != 0);
    CHECK(read_with("wrong") != 0);
  }
  fs::remove_all(dir);
}
