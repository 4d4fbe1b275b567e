// Dependency files and the hash that decides whether the venv is reinstalled.

#include "core/process/shell.hpp"
#include "sync/deps.hpp"
#include "sync/hash.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace rv::sync;
namespace fs = std::filesystem;

TEST_CASE("sync: sha256 of known vectors")
{
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex(std::string(1000, 'a')) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("sync: the nearest requirements.txt or pyproject.toml with [project] is the dependency file")
{
  char tmpl[] = "/tmp/rv-deps-test.XXXXXX";
  fs::path root = ::mkdtemp(tmpl);
  fs::create_directories(root / "sub/deeper");
  std::ofstream(root / "pyproject.toml") << "[tool.black]\nline-length = 100\n";
  auto none = find_deps_file(root, "sub/deeper");
  REQUIRE(none);
  CHECK_FALSE(none->has_value()); // a tool-only pyproject installs nothing
  std::ofstream(root / "pyproject.toml") << "[project]\nname = \"x\"\ndependencies = [\"numpy\"]\n";
  auto py = find_deps_file(root, "sub/deeper");
  REQUIRE(py);
  REQUIRE(py->has_value());
  CHECK((*py)->rel_path == "pyproject.toml");
  CHECK((*py)->kind == "pyproject");
  std::ofstream(root / "sub/requirements.txt") << "numpy==2.0\n";
  auto req = find_deps_file(root, "sub/deeper");
  REQUIRE(req);
  REQUIRE(req->has_value());
  CHECK((*req)->rel_path == "sub/requirements.txt");
  CHECK((*req)->kind == "requirements");
  CHECK((*req)->hash == sha256_hex("numpy==2.0\n"));
  auto at_root = find_deps_file(root, ".");
  REQUIRE(at_root);
  CHECK((*at_root)->rel_path == "pyproject.toml");
  fs::remove_all(root);
}

TEST_CASE("sync: the install argv passes venv, hash, kind and file as positional arguments")
{
  DepsFile d{"requirements.txt", "requirements", "abc"};
  auto argv = deps_argv("/v env", d, "/snap/requirements.txt");
  REQUIRE(argv.size() == 8);
  CHECK(argv[0] == "bash");
  CHECK(argv[3] == "rv-deps");
  CHECK(argv[4] == "/v env");
  CHECK(argv[5] == "abc");
  CHECK(argv[7] == "/snap/requirements.txt");
  CHECK(deps_script().find(".rv-deps-hash") != std::string::npos);
}

TEST_CASE("sync: a task's set-up key changes with the line and with any file's path, size, mtime or mode")
{
  const std::vector<LocalEntry> files = {{"train.py", EntryType::file, 10, 100, 0644, ""},
                                         {"data/link", EntryType::symlink, 0, 100, 0777, "../x"}};
  const auto key = setup_key("pip install -e .", files);
  CHECK(key.size() == 64);
  CHECK(key == setup_key("pip install -e .", files)); // the same content, the same key
  CHECK(key != setup_key("pip install -e . ", files));
  for (int field = 0; field < 5; ++field) {
    auto changed = files;
    switch (field) {
    case 0:
      changed[0].path = "train2.py";
      break;
    case 1:
      changed[0].size = 11;
      break;
    case 2:
      changed[0].mtime_s = 101;
      break;
    case 3:
      changed[0].mode = 0755;
      break;
    default:
      changed[1].link_target = "../y";
      break;
    }
    CAPTURE(field);
    CHECK(key != setup_key("pip install -e .", changed));
  }
  CHECK(key != setup_key("pip install -e .", {files[0]})); // a file removed
}

TEST_CASE("sync: the set-up lines run it once per key, under a lock, and mark it only after success")
{
  using rv::proc::shell_quote;
  const auto dir = fs::temp_directory_path() / ("rv-setup-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto count = dir / "count";
  // The job script's _rv_log, then the lines; a quote in the line stays text.
  const auto lines = [&](const std::string& setup) {
    return "_rv_log() { printf '%s\\n' \"$*\" >&2; }\n" + setup_job_lines((dir / "marks").string(), "k1", setup);
  };
  const std::string setup = "echo \"it's run\" >>" + shell_quote(count.string());
  auto run = [](const std::string& script) {
    return std::system(("bash -c " + shell_quote(script) + " >/dev/null 2>&1").c_str());
  };
  CHECK(run(lines(setup)) == 0);
  CHECK(run(lines(setup)) == 0); // marked: skipped
  std::ifstream in(count);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    CHECK(line == "it's run");
    ++n;
  }
  CHECK(n == 1);
  CHECK(fs::exists(dir / "marks" / "k1.done"));
  // A failing set-up stops the job (exit 1) and leaves no mark for its key.
  const auto failing = "_rv_log() { :; }\n" + setup_job_lines((dir / "marks").string(), "k2", "exit 3");
  CHECK(run(failing) != 0);
  CHECK_FALSE(fs::exists(dir / "marks" / "k2.done"));
  fs::remove_all(dir);
}
