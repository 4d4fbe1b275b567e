// The local key that signs workspace markers (core/store/key_file.hpp).

#include "core/store/key_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

TEST_CASE("key file: made once, private, kept, a foreign or readable file is refused, never overwritten")
{
  const auto dir = fs::temp_directory_path() / ("rv-key-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto path = dir / "state" / "workspace.key";
  auto first = rv::store::load_or_create_key(path);
  REQUIRE_MESSAGE(first, first.error().message);
  CHECK(first->size() == 64);
  CHECK((fs::status(path).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  auto again = rv::store::load_or_create_key(path);
  REQUIRE(again);
  CHECK(*again == *first); // the same key on every later run
  auto other = rv::store::load_or_create_key(dir / "other.key");
  REQUIRE(other);
  CHECK(*other != *first); // random, not derived
  fs::permissions(path, fs::perms::group_read, fs::perm_options::add);
  auto readable = rv::store::load_or_create_key(path);
  REQUIRE_FALSE(readable);
  CHECK(readable.error().message.find("not a private file") != std::string::npos);
  fs::remove(path);
  std::ofstream(path) << "not a key\n";
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  auto garbage = rv::store::load_or_create_key(path);
  REQUIRE_FALSE(garbage);
  CHECK(!garbage.error().hint.empty());
  std::ifstream in(path);
  std::string kept;
  std::getline(in, kept);
  CHECK(kept == "not a key");
  fs::remove_all(dir);
}
