#include "core/store/cache_store.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/record_store.hpp"
#include "fakes/processes.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
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
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].starts_with("bad.json: record "));
  CHECK(skipped[0].find("corrupt") != std::string::npos);
  fs::remove_all(s.dir());
}

TEST_CASE("record store: valid JSON of the wrong shape is skipped by name, never an internal error")
{
  RecordStore s(fresh_dir("shape"));
  REQUIRE(s.create("good1", {{"id", "good1"}, {"created_at", "2026-01-02"}}));
  REQUIRE(s.create("good2", {{"id", "good2"}, {"created_at", "2026-01-01"}}));
  // created_at null or a number sorts as "" (first); a non-object is skipped.
  REQUIRE(write_file_atomic(s.dir() / "nullts.json", R"({"id":"nullts","created_at":null})"));
  REQUIRE(write_file_atomic(s.dir() / "numts.json", R"({"id":"numts","created_at":17})"));
  REQUIRE(write_file_atomic(s.dir() / "arr.json", "[]"));
  REQUIRE(write_file_atomic(s.dir() / "nul.json", "null"));
  CHECK_FALSE(s.create("arr2", nlohmann::json::array()));
  auto arr = s.read("arr");
  REQUIRE_FALSE(arr);
  CHECK(arr.error().message.find("not a JSON object") != std::string::npos);
  std::vector<std::string> skipped;
  auto all = s.list(&skipped);
  REQUIRE(all);
  std::vector<std::string> ids;
  for (const auto& r : *all) {
    ids.push_back(r["id"].get<std::string>());
  }
  CHECK(ids == std::vector<std::string>{"nullts", "numts", "good2", "good1"});
  std::sort(skipped.begin(), skipped.end());
  REQUIRE(skipped.size() == 2);
  CHECK(skipped[0].starts_with("arr.json: "));
  CHECK(skipped[1].starts_with("nul.json: "));
  fs::remove_all(s.dir());
}

TEST_CASE("record store: records carry a schema, one from a newer rv is refused and never rewritten")
{
  RecordStore s(fresh_dir("schema"));
  REQUIRE(s.create("mine", {{"id", "mine"}}));
  CHECK((*s.read("mine"))["schema"] == k_record_schema);
  const std::string newer = R"({"id":"newer","schema":99,"future_field":{"x":1}})";
  REQUIRE(write_file_atomic(s.dir() / "newer.json", newer));
  auto r = s.read("newer");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("newer rv (schema 99") != std::string::npos);
  CHECK_FALSE(s.update("newer", [](nlohmann::json& j) { j["state"] = "cancelled"; }));
  std::ifstream in(s.dir() / "newer.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == newer); // untouched, byte for byte
  std::vector<std::string> skipped;
  REQUIRE(s.list(&skipped)->size() == 1);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].find("newer rv") != std::string::npos);
  // A record without a schema (an older rv's) reads fine and gets one when rewritten.
  REQUIRE(write_file_atomic(s.dir() / "older.json", R"({"id":"older"})"));
  REQUIRE(s.update("older", [](nlohmann::json& j) { j["state"] = "done"; }));
  CHECK((*s.read("older"))["schema"] == k_record_schema);
  fs::remove_all(s.dir());
}

TEST_CASE("record store: strings that are not UTF-8 are stored and read back byte for byte")
{
  RecordStore s(fresh_dir("bytes"));
  const std::string cmd = "python train_\xe9.py";
  const std::string bin = std::string("\xff\xfe\0tail", 7);
  REQUIRE(s.create("b", {{"command", {cmd, "ok"}}, {"nested", {{"v", bin}}}}));
  auto r = s.read("b");
  REQUIRE(r);
  CHECK((*r)["command"][0].get<std::string>() == cmd);
  CHECK((*r)["command"][1] == "ok");
  CHECK((*r)["nested"]["v"].get<std::string>() == bin);
  CHECK_FALSE(valid_utf8(cmd));
  CHECK(valid_utf8("caf\xc3\xa9"));
  CHECK_FALSE(valid_utf8("\xc0\xaf"));         // overlong
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));     // a surrogate
  CHECK_FALSE(valid_utf8("\xf4\x90\x80\x80")); // past U+10FFFF
  // A display dump never throws: the byte becomes U+FFFD.
  CHECK(dump_for_display(*r, -1).find("\xef\xbf\xbd") != std::string::npos);
  fs::remove_all(s.dir());
}

TEST_CASE("record store: a three-way merge keeps a concurrent writer's fields")
{
  const nlohmann::json base = {{"state", "submitted"},
                               {"jobs", {{{"id", "1"}, {"state", "PENDING"}}}},
                               {"secrets_file", "/r/env"},
                               {"meta", {{"a", 1}, {"b", 2}}}};
  auto mine = base; // rv run -f: the race moved on
  mine["jobs"][0]["state"] = "RUNNING";
  mine["meta"]["a"] = 10;
  mine["winner"] = "1";
  auto theirs = base; // rv stop meanwhile
  theirs["state"] = "cancelled";
  theirs.erase("secrets_file");
  theirs["meta"]["b"] = 20;
  auto merged = three_way_merge(base, mine, theirs);
  CHECK(merged["state"] == "cancelled");
  CHECK_FALSE(merged.contains("secrets_file"));
  CHECK(merged["jobs"][0]["state"] == "RUNNING");
  CHECK(merged["winner"] == "1");
  CHECK(merged["meta"] == nlohmann::json{{"a", 10}, {"b", 20}});
  // A field `mine` removed goes.
  auto mine2 = base;
  mine2.erase("secrets_file");
  CHECK_FALSE(three_way_merge(base, mine2, base).contains("secrets_file"));
}

TEST_CASE("record store: a stale whole-record writer no longer undoes a concurrent rv stop (lost update)")
{
  // The way the real callers write: read the record, work for a while on an in-memory copy,
  // then write it back. Meanwhile another process (rv stop) cancels the request.
  RecordStore s(fresh_dir("lost"));
  REQUIRE(s.create("r", {{"state", "submitted"}, {"secrets_file", "/r/env"}, {"jobs", {{{"state", "PENDING"}}}}}));
  auto base = s.read("r");
  REQUIRE(base);
  rv::test::run_in_processes(1, [&](int) {
    return s
        .update("r",
                [](nlohmann::json& j) {
                  j["state"] = "cancelled";
                  j.erase("secrets_file");
                })
        .has_value();
  });
  auto mine = *base;
  mine["jobs"][0]["state"] = "RUNNING";
  REQUIRE(s.merge("r", *base, mine));
  auto now = s.read("r");
  REQUIRE(now);
  CHECK((*now)["state"] == "cancelled");
  CHECK_FALSE(now->contains("secrets_file"));
  CHECK((*now)["jobs"][0]["state"] == "RUNNING");
  fs::remove_all(s.dir());
}

TEST_CASE("request ids are 8 hex digits and differ")
{
  auto a = new_request_id();
  auto b = new_request_id();
  CHECK(a.size() == 8);
  CHECK(a != b);
}

TEST_CASE("cache store: atomic documents, corrupt, foreign or missing files are a miss")
{
  const auto dir = std::filesystem::temp_directory_path() / ("rv-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  rv::store::CacheStore c(dir);
  const auto key = rv::store::CacheStore::key_for("discovery", "ssh a@b:22\nalice");
  CHECK(key == rv::store::CacheStore::key_for("discovery", "ssh a@b:22\nalice")); // stable
  CHECK(key != rv::store::CacheStore::key_for("discovery", "ssh a@c:22\nalice"));
  CHECK(key.starts_with("discovery-"));
  CHECK_FALSE(c.read(key));
  REQUIRE(c.write(key, {{"x", std::string("\xff\x01 bytes")}}));
  auto back = c.read(key);
  REQUIRE(back);
  CHECK((*back)["x"] == std::string("\xff\x01 bytes")); // any bytes a command printed
  std::ofstream(dir / (key + ".json")) << "{\"x\": ";   // torn
  CHECK_FALSE(c.read(key));
  std::ofstream(dir / (key + ".json")) << "[1, 2]"; // not an object
  CHECK_FALSE(c.read(key));
  CHECK_FALSE(c.write("../escape", {}));
  c.remove(key);
  CHECK_FALSE(std::filesystem::exists(dir / (key + ".json")));
  std::filesystem::remove_all(dir);
}

// N13: write_file_atomic wrote through `<file>.tmp.<pid>`, opened with O_CREAT|O_TRUNC: in a directory
// others can write (`rv ssh --config --install --file SHARED/x`) a planted symlink under that name
// made rv truncate and overwrite the file it pointed at.
TEST_CASE("write_file_atomic never writes through a temp name planted beside the target")
{
  const auto dir = fs::temp_directory_path() / fmt::format("rv-atomic-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "shared");
  std::ofstream(dir / "victim") << "private\n";
  const auto target = dir / "shared" / "config";
  fs::create_symlink(dir / "victim", target.string() + fmt::format(".tmp.{}", ::getpid()));
  REQUIRE(write_file_atomic(target, "Host x\n"));
  std::ifstream victim(dir / "victim");
  CHECK(std::string(std::istreambuf_iterator<char>(victim), {}) == "private\n");
  std::ifstream written(target);
  CHECK(std::string(std::istreambuf_iterator<char>(written), {}) == "Host x\n");
  CHECK((fs::status(target).permissions() & fs::perms::all) == fs::perms(0600));
  fs::remove_all(dir);
}

// N16: `jobs` merged as one value: `rv stop` recorded one job CANCELLED while `rv run -f` saved
// another job's state change, and the run's save put the stopped job back as it was.
TEST_CASE("three_way_merge: a request's jobs merge job by job, matched by strategy_id")
{
  const nlohmann::json base = {{"jobs",
                                {{{"strategy_id", "s1"}, {"state", "PENDING"}, {"job_id", "11"}},
                                 {{"strategy_id", "s2"}, {"state", "PENDING"}, {"job_id", "12"}}}}};
  auto mine = base; // rv run -f: s1 started
  mine["jobs"][0]["state"] = "RUNNING";
  auto theirs = base; // rv stop: s2 cancelled, and rv ps adopted an orphan
  theirs["jobs"][1]["state"] = "CANCELLED";
  theirs["jobs"].push_back({{"strategy_id", "orphan"}, {"state", "PENDING"}, {"job_id", "13"}});
  auto merged = three_way_merge(base, mine, theirs);
  REQUIRE(merged["jobs"].size() == 3);
  CHECK(merged["jobs"][0]["state"] == "RUNNING");
  CHECK(merged["jobs"][1]["state"] == "CANCELLED");
  CHECK(merged["jobs"][2]["job_id"] == "13");
  // A job only mine added is appended; one mine removed goes.
  auto mine2 = base;
  mine2["jobs"].erase(1);
  mine2["jobs"].push_back({{"strategy_id", "orphan-14"}, {"state", "PENDING"}, {"job_id", "14"}});
  auto merged2 = three_way_merge(base, mine2, theirs);
  REQUIRE(merged2["jobs"].size() == 3);
  CHECK(merged2["jobs"][0]["strategy_id"] == "s1");
  CHECK(merged2["jobs"][1]["strategy_id"] == "orphan");
  CHECK(merged2["jobs"][2]["strategy_id"] == "orphan-14");
  // Arrays without the key (or with duplicates) are still one value.
  CHECK(three_way_merge({{"a", {1, 2}}}, {{"a", {1, 3}}}, {{"a", {4}}})["a"] == nlohmann::json{1, 3});
}
