// Dependency files and the hash that decides whether the venv is reinstalled.

#include "sync/deps.hpp"
#include "sync/hash.hpp"

#include <doctest/doctest.h>

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
