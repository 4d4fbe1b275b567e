// Reading a key file that may have a passphrase (core/ssh/private_key.hpp): what the login does
// before it asks anything (security review 3, N10). Keys made with generate_ed25519 (OpenSSH's
// format, as ssh-keygen writes it) in a temp directory.

#include "core/ssh/keys.hpp"
#include "core/ssh/private_key.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace rv;
using namespace rv::proc::ssh;

namespace {

struct KeyDir {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("rv-private-key-" + std::to_string(::getpid()));
  KeyDir()
  {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~KeyDir() { std::filesystem::remove_all(dir); }
  std::string path(const char* name) const { return (dir / name).string(); }
};

} // namespace

TEST_CASE("read_private_key: a key with a passphrase is `locked` without it or with a wrong one, and opens with it")
{
  KeyDir d;
  const auto plain = d.path("plain"), locked = d.path("locked");
  REQUIRE(rv::proc::generate_ed25519(plain, "t"));
  REQUIRE(rv::proc::generate_ed25519(locked, "t", "open sesame"));
  KeyPtr key;
  CHECK(read_private_key(plain, nullptr, key) == KeyFile::ok);
  CHECK(key);
  key.reset();
  // Learnt before the key derivation: no time is spent on a key that is then skipped or asked for.
  const auto start = std::chrono::steady_clock::now();
  CHECK(read_private_key(locked, nullptr, key) == KeyFile::locked);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(50));
  CHECK_FALSE(key);
  CHECK(read_private_key(locked, "open sesamE", key) == KeyFile::locked);
  CHECK_FALSE(key);
  CHECK(read_private_key(locked, "open sesame", key) == KeyFile::ok);
  CHECK(key);
  // Not a key, or no file: unreadable, which the login reports as such (not a passphrase to ask).
  std::ofstream(d.path("text")) << "not a key\n";
  CHECK(read_private_key(d.path("text"), nullptr, key) == KeyFile::unreadable);
  CHECK(read_private_key(d.path("missing"), nullptr, key) == KeyFile::unreadable);
}

TEST_CASE("public_key_of: the .pub, else the public part of an encrypted OpenSSH key: the host is asked first")
{
  KeyDir d;
  const auto locked = d.path("locked");
  REQUIRE(rv::proc::generate_ed25519(locked, "t", "pw"));
  auto with_pub = public_key_of(locked);
  REQUIRE(with_pub);
  std::filesystem::remove(locked + ".pub");
  auto without_pub = public_key_of(locked);
  REQUIRE(without_pub);
  CHECK(ssh_key_cmp(with_pub.get(), without_pub.get(), SSH_KEY_CMP_PUBLIC) == 0);
  CHECK_FALSE(public_key_of(d.path("missing")));
}
