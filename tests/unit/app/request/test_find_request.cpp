// #25 item 2: one answer to "which request does KEY mean", for every command (find_request), and
// one meaning of "the latest" (sort_newest_first). The ambiguous cases are the point.
#include "app/request/lookup.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <unistd.h>

using namespace rv;
using namespace rv::app;

namespace {

struct Store {
  std::filesystem::path dir;
  store::RecordStore store;
  explicit Store(const char* name)
      : dir(std::filesystem::temp_directory_path() / fmt::format("rv-find-{}-{}", name, ::getpid())),
        store((std::filesystem::remove_all(dir), dir))
  {}
  ~Store() { std::filesystem::remove_all(dir); }
  void add(const std::string& id, const std::string& name, const std::string& created, std::vector<std::string> job_ids,
           std::vector<std::string> earlier = {})
  {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& j : job_ids) {
      jobs.push_back({{"strategy_id", "s1"}, {"job_id", j}, {"state", "COMPLETED"}, {"earlier_segments", earlier}});
    }
    auto r = request_from_json(
        nlohmann::json{{"id", id}, {"name", name}, {"state", "done"}, {"created_at", created}, {"jobs", jobs}});
    REQUIRE(r);
    REQUIRE(store.create(r->id, to_json(*r)));
  }
};

} // namespace

TEST_CASE("find_request: id, then job id, then the newest of a name, then a unique id prefix")
{
  Store s("levels");
  s.add("abcd1234", "train", "2026-11-20T10:00:00Z", {"101"});
  s.add("abef5678", "train", "2026-11-21T10:00:00Z", {"102"});
  s.add("1020aaaa", "eval", "2026-11-22T10:00:00Z", {"103"}, {"99"});
  s.add("beadbead", "abcd", "2026-11-23T10:00:00Z", {"104"});
  // a whole id
  CHECK(find_request(s.store, "abcd1234")->id == "abcd1234");
  // a name used twice: the newest of them, not an error (names repeat run after run)
  CHECK(find_request(s.store, "train")->id == "abef5678");
  // "102" is job 102 of abef5678 before it is the start of id 1020aaaa
  CHECK(find_request(s.store, "102")->id == "abef5678");
  // an earlier checkpoint segment's job id names its request too
  CHECK(find_request(s.store, "99")->id == "1020aaaa");
  // "abcd" is a request's name before it is the start of id abcd1234
  CHECK(find_request(s.store, "abcd")->id == "beadbead");
  // a prefix only one id has
  CHECK(find_request(s.store, "abe")->id == "abef5678");
  CHECK(find_request(s.store, "1020")->id == "1020aaaa");
  // a prefix of several ids: an error that lists them, newest first
  auto several = find_request(s.store, "ab");
  REQUIRE_FALSE(several);
  CHECK(several.error().code == ErrorCode::usage);
  CHECK(several.error().message == "'ab' is the start of several request ids: abef5678, abcd1234");
  CHECK(several.error().hint == "give more of the id");
  // nothing, and the empty key
  auto none = find_request(s.store, "zzz");
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "no request matches 'zzz'");
  CHECK_FALSE(find_request(s.store, ""));
}

// S10 (security review 3): job ids repeat across clusters; `rv stop 12345` took the newest record
// on any cluster, so it could cancel another cluster's job.
TEST_CASE("find_request: a job id that requests on several clusters carry lists them instead of choosing")
{
  Store s("clusters");
  Store one("one-cluster");
  auto add = [](Store& to, const std::string& id, const std::string& created, const std::string& host,
                const std::string& destination) {
    auto r = request_from_json(nlohmann::json{{"id", id},
                                              {"name", "train"},
                                              {"state", "done"},
                                              {"created_at", created},
                                              {"host", host},
                                              {"destination", destination},
                                              {"jobs", {{{"strategy_id", "s1"}, {"job_id", "12345"}}}}});
    REQUIRE(r);
    REQUIRE(to.store.create(r->id, to_json(*r)));
  };
  add(s, "aaaa0001", "2026-11-20T10:00:00Z", "ssh ana@a.example:22", "a");
  add(s, "bbbb0002", "2026-11-21T10:00:00Z", "ssh ana@b.example:22", "b");
  auto two = find_request(s.store, "12345");
  REQUIRE_FALSE(two);
  CHECK(two.error().code == ErrorCode::usage);
  CHECK(two.error().message == "job 12345 is a job of requests on several clusters: bbbb0002 on b, aaaa0001 on a");
  CHECK(two.error().hint == "name the request by its id");
  CHECK(find_request(s.store, "bbbb0002")->id == "bbbb0002");
  // On one cluster (by two names of it), the newest, as before.
  add(one, "cccc0003", "2026-11-20T10:00:00Z", "ssh ana@a.example:22", "a");
  add(one, "dddd0004", "2026-11-21T10:00:00Z", "ssh ana@a.example:22", "a-alias");
  CHECK(find_request(one.store, "12345")->id == "dddd0004");
}

TEST_CASE("sort_newest_first: by created_at, then (the same second) by the highest job id")
{
  std::vector<RequestRecord> rs(3);
  rs[0].id = "old";
  rs[0].created_at = "2026-11-20T10:00:00Z";
  rs[1].id = "same-second-first";
  rs[1].created_at = "2026-11-21T10:00:00Z";
  rs[1].jobs.push_back(JobRecord{});
  rs[1].jobs.back().job_id = "9";
  rs[2].id = "same-second-later";
  rs[2].created_at = "2026-11-21T10:00:00Z";
  rs[2].jobs.push_back(JobRecord{});
  rs[2].jobs.back().job_id = "10"; // numerically, not as text
  sort_newest_first(rs);
  CHECK(rs[0].id == "same-second-later");
  CHECK(rs[1].id == "same-second-first");
  CHECK(rs[2].id == "old");
}
