// rv init's pure parts: the remote commands (the authorized_keys install run for real with sh
// against a temp HOME), scratch candidates, the answers' JSON.

#include "app/init/init.hpp"

#include <doctest/doctest.h>

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
