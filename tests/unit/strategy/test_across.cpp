// One ranking across clusters (strategy/across.hpp): wait first, each cluster's SU weighted, then
// the cluster named first; unknown waits last.

#include "strategy/across.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::strategy;

namespace {

model::Strategy make_strategy(std::string id, std::optional<std::int64_t> wait, double su)
{
  model::Strategy s;
  s.id = std::move(id);
  s.est_wait_s = wait;
  s.est_su = su;
  return s;
}

Plan plan_of(std::vector<model::Strategy> strategies, std::int64_t resolution = 30)
{
  Plan p;
  p.strategies = std::move(strategies);
  p.rank_resolution_s = resolution;
  return p;
}

std::vector<std::string> ids(const std::vector<ClusterPlanView>& views, const std::vector<Placed>& order)
{
  std::vector<std::string> out;
  for (const auto& p : order) {
    out.push_back(views[p.cluster].host + "/" + views[p.cluster].plan->strategies[p.strategy].id);
  }
  return out;
}

} // namespace

TEST_CASE("across: the sooner start wins across clusters, SU decides within the resolution")
{
  auto a = plan_of({make_strategy("s1", 0, 50), make_strategy("s2", 3600, 10)});
  auto b = plan_of({make_strategy("s1", 10, 40), make_strategy("s2", std::nullopt, 1)});
  std::vector<ClusterPlanView> views{{"A", &a, 1, true}, {"B", &b, 1, true}};
  // A/s1 and B/s1 start within 30 s of each other: B's is cheaper. Unknown waits go last.
  CHECK(ids(views, rank_across(views)) == std::vector<std::string>{"B/s1", "A/s1", "A/s2", "B/s2"});
}

TEST_CASE("across: a cluster's SU weight changes the order between equal waits")
{
  auto a = plan_of({make_strategy("s1", 0, 50)});
  auto b = plan_of({make_strategy("s1", 0, 40)});
  std::vector<ClusterPlanView> views{{"A", &a, 1, true}, {"B", &b, 2, true}}; // B's units cost twice
  auto order = rank_across(views);
  CHECK(ids(views, order) == std::vector<std::string>{"A/s1", "B/s1"});
  CHECK(order[1].weighted_su == doctest::Approx(80));
}

TEST_CASE("across: the coarser resolution of the clusters buckets both, ties go to the cluster named first")
{
  auto a = plan_of({make_strategy("s1", 50, 10)}, 60);
  auto b = plan_of({make_strategy("s1", 0, 10)}, 1);
  std::vector<ClusterPlanView> views{{"A", &a, 1, true}, {"B", &b, 1, true}};
  CHECK(ids(views, rank_across(views)) == std::vector<std::string>{"A/s1", "B/s1"});
  auto c = plan_of({make_strategy("s1", 70, 10)}, 60); // beyond one step: the sooner wins
  std::vector<ClusterPlanView> later{{"C", &c, 1, true}, {"B", &b, 1, true}};
  CHECK(ids(later, rank_across(later)) == std::vector<std::string>{"B/s1", "C/s1"});
}

TEST_CASE("across: the plan says when SU units are compared with the default weight")
{
  auto a = plan_of({});
  std::vector<ClusterPlanView> one{{"A", &a, 1, false}};
  CHECK(su_weight_note(one).empty());
  std::vector<ClusterPlanView> both_set{{"A", &a, 1, true}, {"B", &a, 0.5, true}};
  CHECK(su_weight_note(both_set).empty());
  std::vector<ClusterPlanView> unset{{"A", &a, 1, true}, {"B", &a, 1, false}};
  const auto note = su_weight_note(unset);
  CHECK(note.find("weight 1 for B") != std::string::npos);
  CHECK(note.find("su_weights") != std::string::npos);
}
