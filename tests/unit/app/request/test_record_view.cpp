// The readers of a request record's free-form nested fields (app/record_view.hpp, refanout_lines):
// a record whose `sync`, `plan` or `refanout` has an odd shape reads as defaults. Before, one such
// record made `rv ps -a` and `rv why` fail with "internal error" (json type_error 302/306) and hid
// every other record (N5).

#include "app/request/record_view.hpp"
#include "app/run/launch/refanout.hpp"
#include "core/store/json_fields.hpp"

#include <doctest/doctest.h>

using namespace rv::app;
using nlohmann::json;

TEST_CASE("record view: git_label reads the sync record by type")
{
  RequestRecord r;
  r.sync = json{{"git", {{"branch", "main"}, {"commit", "3f9c02a"}, {"dirty", true}}}};
  CHECK(git_label(r) == "  [main@3f9c02a*]");
  for (const auto& odd : {json{{"git", "x"}}, json{{"git", 7}}, json("sync"), json::array({1}), json()}) {
    CAPTURE(odd.dump());
    r.sync = odd;
    CHECK(git_label(r).empty());
  }
  r.sync = json{{"git", {{"branch", 1}, {"commit", json::array()}, {"dirty", "yes"}}}};
  CHECK(git_label(r) == "  [?@?]");
}

TEST_CASE("record view: refanout_lines reads every field by type")
{
  CHECK(refanout_lines(json{{"history", json::array({{{"node", 7}}})}}) ==
        std::vector<std::string>{"? failed with a GPU fault () in request ?, job ?"});
  CHECK(refanout_lines(json{{"history", "x"}, {"next_request", 5}}).empty());
  CHECK(refanout_lines(json{{"history", json::array({1, "x", nullptr})}}).empty());
}

TEST_CASE("record view: planned_su reads the plan by type")
{
  RequestRecord r;
  r.plan = json{{"strategies", json::array({{{"id", "s1"}, {"est_su", 12.5}}, {{"id", "s2"}, {"est_su", "x"}}})}};
  CHECK(planned_su(r, "s1") == 12.5);
  CHECK(planned_su(r, "s2") == 0);
  for (const auto& odd : {json("plan"), json{{"strategies", 3}}, json{{"strategies", json::array({1, "s1"})}},
                          json{{"strategies", json::array({{{"id", 1}}})}}}) {
    CAPTURE(odd.dump());
    r.plan = odd;
    CHECK(planned_su(r, "s1") == 0);
  }
}

TEST_CASE("json fields: the fallback for a missing key, another type or a document that is no object")
{
  using namespace rv::store;
  const json j = {{"s", "x"}, {"b", true}, {"n", 2}, {"a", json::array({1})}, {"o", {{"k", 1}}}};
  CHECK(text_field(j, "s") == "x");
  CHECK(text_field(j, "n", "?") == "?");
  CHECK(text_field(json::array(), "s", "?") == "?");
  CHECK(bool_field(j, "b"));
  CHECK_FALSE(bool_field(j, "s"));
  CHECK(number_field(j, "n") == 2);
  CHECK(number_field(j, "s", 1) == 1);
  CHECK(array_field(j, "a").size() == 1);
  CHECK(array_field(j, "o").empty());
  CHECK(object_field(j, "o").size() == 1);
  CHECK(object_field(j, "a").empty());
  CHECK(object_field(json(), "o").empty());
}

TEST_CASE("record view: a race member another member won reads lost, the cluster column's label")
{
  RequestRecord r;
  r.id = "aaaa0001";
  r.state = RequestState::cancelled;
  CHECK(state_label(r) == "cancelled");
  r.race = json{{"group", "g1"}, {"members", json::array()}, {"chosen", "bbbb0002"}};
  CHECK(state_label(r) == "lost");
  r.race["chosen"] = "aaaa0001"; // the winner, cancelled by the user: cancelled
  CHECK(state_label(r) == "cancelled");
  r.race["chosen"] = "";
  CHECK(state_label(r) == "cancelled"); // no winner yet: the race was stopped
  r.race = json{{"chosen", 7}};         // an odd shape reads as no winner
  CHECK(state_label(r) == "cancelled");
  r.state = RequestState::done;
  CHECK(state_label(r) == "done");

  r.host = "ssh rvtest@127.0.0.1:2222";
  CHECK(r.cluster_label() == "rvtest@127.0.0.1:2222");
  r.destination = "rvtb";
  CHECK(r.cluster_label() == "rvtb");
  r.cluster = "rvtest";
  CHECK(r.cluster_label() == "rvtest");
  auto back = request_from_json(to_json(r));
  REQUIRE(back);
  CHECK(back->cluster == "rvtest");
}

TEST_CASE("record view: a job's detail in rv ps, a sibling that ended without starting keeps no stale reason")
{
  JobRecord j;
  j.state = rv::slurm::JobState::pending;
  j.reason = "Priority";
  j.start_estimate = "2026-11-29T12:00:00";
  CHECK(job_detail(j) == "other jobs are ahead in the queue (Priority) start ~2026-11-29T12:00:00");
  j.state = rv::slurm::JobState::cancelled; // cancelled while pending: the reason was true then
  CHECK(job_detail(j).empty());
  j.error = "sbatch: error: invalid partition";
  CHECK(job_detail(j) == "sbatch: error: invalid partition");
  j.error.clear();
  j.node_list = "v100-1";
  j.elapsed_s = 65;
  CHECK(job_detail(j) == "v100-1 1m");
}
