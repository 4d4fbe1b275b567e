// A study that no rv tends gets a background rv from `rv ps` (app/run/study_run.hpp,
// tend_untended_studies); one tender at a time (the tending lock, store::FileLock::try_acquire).

#include "app/request/requests.hpp"
#include "app/run/study_run.hpp"
#include "core/store/record_store.hpp"
#include "unit/app/run/launch/two_clusters.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace rv;
using namespace rv::app;
using rv::test::lifecycle::TwoClusters;

namespace {

void add_study(TwoClusters& t, const std::string& id, RequestState state, nlohmann::json study)
{
  RequestRecord r;
  r.id = id;
  r.name = "sweep";
  r.destination = "A";
  r.remote_root = "/home/alice/.rv";
  r.state = state;
  r.created_at = "2026-11-29T07:00:00Z";
  r.study = std::move(study);
  REQUIRE(t.world.requests.create(id, to_json(r)));
}

nlohmann::json one_cluster_study()
{
  return {{"tasks", nlohmann::json::array()}};
}

nlohmann::json across_study(const std::string& coordinator, const std::string& other)
{
  return {{"across", {{"members", {{{"id", coordinator}, {"host", "A"}}, {{"id", other}, {"host", "B"}}}}}}};
}

} // namespace

TEST_CASE("tend studies: rv ps starts a background rv for each unfinished study nobody tends, and only those")
{
  TwoClusters t;
  add_study(t, "aaaa0001", RequestState::submitted, one_cluster_study());                  // untended: started
  add_study(t, "aaaa0002", RequestState::submitted, one_cluster_study());                  // tended (lock held): not
  add_study(t, "aaaa0003", RequestState::done, one_cluster_study());                       // over: not
  add_study(t, "aaaa0004", RequestState::submitting, one_cluster_study());                 // its rv still submits: not
  add_study(t, "cccc0001", RequestState::submitted, across_study("cccc0001", "cccc0002")); // coordinator
  add_study(t, "cccc0002", RequestState::submitted, across_study("cccc0001", "cccc0002")); // member: not
  RequestRecord plain;
  plain.id = "dddd0001";
  plain.name = "train";
  plain.state = RequestState::submitted;
  plain.created_at = "2026-11-29T07:00:00Z";
  REQUIRE(t.world.requests.create(plain.id, to_json(plain))); // not a study: not

  auto held = store::FileLock::try_acquire(tending_lock_path(t.world.requests, "aaaa0002"));
  REQUIRE(held);
  REQUIRE(held->has_value());

  tend_untended_studies(t.world.env);

  CHECK(t.settled_in_background == std::vector<std::string>{"aaaa0001", "cccc0001"});
  const auto err = t.world.output.stderr_text;
  CHECK(err.find("rv: study aaaa0001 had no rv tending it") != std::string::npos);
  CHECK(err.find("cccc0001") != std::string::npos);
  CHECK(err.find("aaaa0002") == std::string::npos);
}

TEST_CASE("tend studies: the tending lock admits one holder, released, the next try takes it")
{
  TwoClusters t;
  std::filesystem::create_directories(t.world.requests.dir());
  const auto path = tending_lock_path(t.world.requests, "aaaa0001");
  auto first = store::FileLock::try_acquire(path);
  REQUIRE(first);
  REQUIRE(first->has_value());
  auto second = store::FileLock::try_acquire(path);
  REQUIRE(second);
  CHECK_FALSE(second->has_value()); // held: no wait, no lock
  first->reset();
  auto third = store::FileLock::try_acquire(path);
  REQUIRE(third);
  CHECK(third->has_value());
}

TEST_CASE("tend studies: a second background rv for a tended study exits 0 at once, asking the cluster nothing")
{
  TwoClusters t;
  add_study(t, "aaaa0001", RequestState::submitted, one_cluster_study());
  auto held = store::FileLock::try_acquire(tending_lock_path(t.world.requests, "aaaa0001"));
  REQUIRE(held);
  REQUIRE(held->has_value());
  auto rc = settle_study(t.world.env, "aaaa0001");
  REQUIRE(rc);
  CHECK(*rc == 0);
  CHECK(t.world.cluster.done()); // nothing was scripted: any command would have failed the run
}
