#include "core/store/record_store.hpp"
#include "fakes/processes.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <unistd.h>

using namespace rv::store;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const char* name)
{
  auto dir = fs::temp_directory_path() / fmt::format("rv-store-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  return dir;
}
} // namespace

TEST_CASE("record store: create, read, update, list, remove")
{
  RecordStore s(fresh_dir("basic"));
  REQUIRE(s.create("abc", {{"created_at", "2026-01-02"}, {"jobs", nlohmann::json::array()}}));
  CHECK_FALSE(s.create("abc", {})); // no silent overwrite
  REQUIRE(s.create("old", {{"created_at", "2026-01-01"}}));
  auto updated = s.update("abc", [](nlohmann::json& r) { r["jobs"].push_back(42); });
  REQUIRE(updated);
  CHECK((*updated)["jobs"][0] == 42);
  auto read = s.read("abc");
  REQUIRE(read);
  CHECK((*read)["jobs"].size() == 1);
  auto all = s.list();
  REQUIRE(all);
  REQUIRE(all->size() == 2);
  CHECK((*all)[0]["created_at"] == "2026-01-01");
  CHECK((fs::status(s.dir()).permissions() & fs::perms::others_all) == fs::perms::none);
  REQUIRE(s.remove("abc"));
  CHECK_FALSE(s.read("abc"));
  fs::remove_all(s.dir());
}

TEST_CASE("record store: ids cannot escape the directory")
{
  RecordStore s(fresh_dir("ids"));
  CHECK_FALSE(s.create("../evil", {}));
  CHECK_FALSE(s.read("a/b"));
  CHECK_FALSE(s.create("", {}));
}

TEST_CASE("record store: concurrent updates from several processes all land")
{
  RecordStore s(fresh_dir("concurrent"));
  REQUIRE(s.create("r", {{"n", 0}}));
  constexpr int k_procs = 4;
  constexpr int k_each = 25;
  rv::test::run_in_processes(k_procs, [&](int) {
    for (int i = 0; i < k_each; ++i) {
      if (!s.update("r", [](nlohmann::json& r) { r["n"] = r["n"].get<int>() + 1; })) {
        return false;
      }
    }
    return true;
  });
  auto r = s.read("r");
  REQUIRE(r);
  CHECK((*r)["n"] == k_procs * k_each);
  fs::remove_all(s.dir());
}

TEST_CASE("record store: a corrupt record is reported, and skipped by list")
{
  RecordStore s(fresh_dir("corrupt"));
  REQUIRE(s.create("good", {{"ok", true}}));
  REQUIRE(write_file_atomic(s.dir() / "bad.json", "{ not json"));
  CHECK_FALSE(s.read("bad"));
  std::vector<std::string> skipped;
  auto all = s.list(&skipped);
  REQUIRE(all);
  CHECK(all->size() == 1);
  CHECK(skipped == std::vector<std::string>{"bad.json"});
  fs::remove_all(s.dir());
}

TEST_CASE("request ids are 8 hex digits and differ")
{
  auto a = new_request_id();
  auto b = new_request_id();
  CHECK(a.size() == 8);
  CHECK(a != b);
}
