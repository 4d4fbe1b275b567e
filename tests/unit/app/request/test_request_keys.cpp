// One KEY -> request policy (#39 item 4, UX review 3 N9): every command family that takes a
// REQUEST (logs, why, gpu, ssh/forward, stop) resolves each form of KEY the same way: a request
// id, an id prefix, a job id, a name, and a race id (the member chosen; a race not yet won lists its
// members instead of guessing).

#include "app/manage/manage.hpp"
#include "app/node/gpu.hpp"
#include "app/node/job_target.hpp"
#include "app/request/lookup.hpp"
#include "app/why/why.hpp"
#include "fakes/recording_runner.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>

using namespace rv;
using namespace rv::app;

namespace {

constexpr const char* k_here = "recorded"; // RecordingRunner::where()

struct World {
  test::lifecycle::World base; // the stores, the clock, the output
  test::RecordingRunner cluster;
  store::RecordStore& requests = base.requests;
  Env env{cluster,     base.local, base.clock, base.requests, base.secrets, base.settings,
          base.output, false,      0,          "/home/alice", base.dir};
  explicit World(const std::string& name, bool seeded = true) : base(("keys-" + name).c_str())
  {
    if (!seeded) {
      return;
    }
    // A request of its own: 3f9c02ab, named train, its job 812 completed.
    add({{"id", "3f9c02ab"}, {"name", "train"}, {"created_at", "2027-01-15T07:00:00Z"}}, "812");
    // A race won on rvtb: member 58583a3b chosen, 7c7c7c7c (rvtb2) cancelled.
    const nlohmann::json won = {
        {"group", "ab8acabe"},
        {"members", {{{"id", "58583a3b"}, {"host", "rvtb"}}, {{"id", "7c7c7c7c"}, {"host", "rvtb2"}}}},
        {"chosen", "58583a3b"}};
    add({{"id", "58583a3b"},
         {"name", "rv-58583a3b"},
         {"created_at", "2027-01-15T07:10:00Z"},
         {"destination", "rvtb"},
         {"race", won}},
        "901");
    add({{"id", "7c7c7c7c"},
         {"name", "rv-7c7c7c7c"},
         {"created_at", "2027-01-15T07:10:00Z"},
         {"destination", "rvtb2"},
         {"state", "cancelled"},
         {"race", won}},
        "902", "CANCELLED");
    // A race not yet won: both members pend.
    const nlohmann::json open = {
        {"group", "cd12cd12"},
        {"members", {{{"id", "11110001"}, {"host", "rvtb"}}, {{"id", "22220002"}, {"host", "rvtb2"}}}}};
    add({{"id", "11110001"},
         {"name", "rv-11110001"},
         {"created_at", "2027-01-15T07:20:00Z"},
         {"destination", "rvtb"},
         {"state", "submitted"},
         {"race", open}},
        "903", "PENDING");
    add({{"id", "22220002"},
         {"name", "rv-22220002"},
         {"created_at", "2027-01-15T07:20:00Z"},
         {"destination", "rvtb2"},
         {"state", "submitted"},
         {"race", open}},
        "904", "PENDING");
  }
  void add(nlohmann::json doc, const std::string& job_id, const std::string& state = "COMPLETED")
  {
    if (!doc.contains("host")) {
      doc["host"] = k_here;
    }
    doc["log_dir"] = "/home/alice/.rv/logs";
    if (!doc.contains("state")) {
      doc["state"] = "done";
    }
    doc["winner"] = state == "COMPLETED" ? "s1" : "";
    doc["jobs"] = {{{"strategy_id", "s1"}, {"job_id", job_id}, {"state", state}, {"node_list", "a100-1"}}};
    auto r = request_from_json(doc);
    REQUIRE(r);
    REQUIRE(requests.create(r->id, to_json(*r)));
  }

  // Whether the cluster was asked anything naming `text` (a log path, a job id).
  bool asked(const std::string& text) const
  {
    return std::any_of(cluster.recorded().begin(), cluster.recorded().end(), [&](const proc::Command& c) {
      return std::any_of(c.argv.begin(), c.argv.end(),
                         [&](const std::string& a) { return a.find(text) != std::string::npos; });
    });
  }
};

// The request id a command family resolved `key` to, read from what it did, or "error: <message>".
using Family = std::function<std::string(World&, const std::string&)>;

std::string error_of(const Error& e)
{
  return "error: " + e.message;
}

// gpu and ssh look at a running job, and every request here has ended or pends: their error
// names the request they resolved ("request 3f9c02ab has ended (COMPLETED): ..."). Any other
// error (the same-host rule, an unknown KEY) is the error itself.
std::string resolved_in(const Error& e)
{
  const bool about_one = e.message.starts_with("request ") && e.message.find(" was submitted on ") == std::string::npos;
  return about_one ? e.message.substr(8, 8) : error_of(e);
}

const std::vector<std::pair<const char*, Family>>& families()
{
  static const std::vector<std::pair<const char*, Family>> all = {
      {"logs",
       [](World& w, const std::string& key) -> std::string {
         auto code = show_logs(w.env, {key, false, false, -1, -1});
         if (!code) {
           return error_of(code.error());
         }
         for (const auto& [id, path] :
              {std::pair{"3f9c02ab", "/train-812.out"}, {"58583a3b", "/rv-58583a3b-901.out"}}) {
           if (w.asked(path)) {
             return id;
           }
         }
         return "no log read";
       }},
      {"why",
       [](World& w, const std::string& key) -> std::string {
         WhyOptions opts;
         opts.key = key;
         opts.replan = false;
         auto rep = explain_request(w.env, opts);
         return rep ? rep->request_id : error_of(rep.error());
       }},
      {"gpu",
       [](World& w, const std::string& key) -> std::string {
         auto t = gpu_target(w.env, key);
         if (t) {
           return t->request.id;
         }
         return resolved_in(t.error());
       }},
      {"ssh",
       [](World& w, const std::string& key) -> std::string {
         auto t = running_target(w.env, key, 0);
         if (t) {
           return t->request_id;
         }
         return resolved_in(t.error());
       }},
      {"stop",
       [](World& w, const std::string& key) -> std::string {
         auto t = stop_targets(w.env, key, false);
         if (!t) {
           return error_of(t.error());
         }
         return t->size() == 1 ? t->front().id : fmt::format("{} targets", t->size());
       }},
  };
  return all;
}

} // namespace

TEST_CASE("request keys: every family resolves an id, a prefix, a job id, a name and a race id alike")
{
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"3f9c02ab", "3f9c02ab"}, // a whole request id
      {"3f9c", "3f9c02ab"},     // the start of one id
      {"812", "3f9c02ab"},      // a job id
      {"train", "3f9c02ab"},    // a name
      {"ab8acabe", "58583a3b"}, // a race id: the member chosen (UX review 3, N9: `rv logs ab8acabe`)
      {"901", "58583a3b"},      // the chosen member's job id
      {"no-such", "error: no request matches 'no-such'"},
      {"cd12cd12", "error: race cd12cd12 has no winner yet: its members are 11110001 on rvtb, 22220002 on rvtb2"},
  };
  for (const auto& [family, resolve] : families()) {
    for (const auto& [key, want] : keys) {
      const std::string name = family;
      CAPTURE(name);
      CAPTURE(key);
      World w(std::string(family) + "-" + key);
      CHECK(resolve(w, key) == want);
    }
  }
}

TEST_CASE("request keys: a race not yet won is never guessed, its error says how to name a member")
{
  World w("open-race");
  auto r = find_request(w.requests, "cd12cd12");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::usage);
  CHECK(r.error().hint == "name one member by its id (rv ps lists them); rv stop stops the whole race by either");
  // Each member by its own id.
  CHECK(find_request(w.requests, "11110001")->id == "11110001");
  CHECK(find_request(w.requests, "22220002")->id == "22220002");
}

TEST_CASE("request keys: without a KEY each family means this host's newest that fits it")
{
  World w("unnamed");
  // One more request, newer than the rest, submitted on another host: never the default here.
  const nlohmann::json other = {{"id", "99990009"},
                                {"name", "elsewhere"},
                                {"host", "ssh ana@other:22"},
                                {"state", "submitted"},
                                {"created_at", "2027-01-15T09:00:00Z"}};
  w.add(other, "990", "PENDING");
  auto ids = [](const Result<std::vector<RequestRecord>>& rs) {
    std::vector<std::string> out;
    for (const auto& r : *rs) {
      out.push_back(r.id);
    }
    return out;
  };
  // Newest first; the same second goes to the highest job id.
  CHECK(ids(requests_for_key(w.env, "", Unnamed::newest)) ==
        std::vector<std::string>{"22220002", "11110001", "7c7c7c7c", "58583a3b", "3f9c02ab"});
  // rv why: the still-submitted first.
  auto why_default = requests_for_key(w.env, "", Unnamed::newest_submitted);
  REQUIRE(why_default);
  CHECK(why_default->front().id == "22220002");
  // rv ssh, forward, gpu: the unfinished only.
  CHECK(ids(requests_for_key(w.env, "", Unnamed::unfinished)) == std::vector<std::string>{"22220002", "11110001"});
  // Only the other host's: each family says where it is instead of "nothing here".
  World alone("unnamed-elsewhere", false);
  alone.add(other, "990", "PENDING");
  for (auto unnamed : {Unnamed::newest, Unnamed::newest_submitted, Unnamed::unfinished}) {
    auto none_here = requests_for_key(alone.env, "", unnamed);
    REQUIRE_FALSE(none_here);
    CHECK(none_here.error().message ==
          "request 99990009 was submitted on ssh ana@other:22, but rv is connected to recorded");
  }
  // A KEY naming the other host's request is refused here, by every family alike.
  for (const auto& [family, resolve] : families()) {
    if (std::string(family) == "stop") {
      continue; // rv stop acts on each request on its own cluster (a race member on another host too)
    }
    const std::string name = family;
    CAPTURE(name);
    World v(std::string("other-") + family);
    v.add(other, "990", "PENDING");
    CHECK(resolve(v, "99990009").starts_with("error: request 99990009 was submitted on ssh ana@other:22"));
  }
}
