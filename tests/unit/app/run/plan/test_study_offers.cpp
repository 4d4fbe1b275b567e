// A study across clusters (app/run/plan/study_offers.hpp): which offers rv makes and takes back
// given the tasks waiting, the offers open and the workers running on each cluster; how the pool
// spreads over the clusters; and the tasks as the clusters together say.

#include "app/run/plan/study_offers.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app::study;

TEST_CASE("study offers: none where no worker runs, idle workers plus a prefetch where they do")
{
  OfferInput in;
  in.waiting = {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}};
  in.clusters = {{0, 0}, {2, 0}}; // cluster 0: workers pending only; cluster 1: two running, idle
  const auto p = plan_offers(in);
  CHECK(p.revoke.empty());
  REQUIRE(p.make.size() == 3);
  CHECK(p.make[0] == Offer{0, 1, 1});
  CHECK(p.make[1] == Offer{1, 1, 1});
  CHECK(p.make[2] == Offer{2, 1, 1});

  in.clusters = {{0, 0}, {0, 0}};
  CHECK(plan_offers(in).make.empty());
}

TEST_CASE("study offers: the clusters take the waiting tasks in turn, in task order, with their attempt")
{
  OfferInput in;
  in.waiting = {{2, 1}, {5, 3}, {7, 1}};
  in.clusters = {{1, 0}, {1, 0}};
  in.prefetch = 0;
  const auto p = plan_offers(in);
  REQUIRE(p.make.size() == 2);
  CHECK(p.make[0] == Offer{2, 1, 0});
  CHECK(p.make[1] == Offer{5, 3, 1});
}

TEST_CASE("study offers: a busy worker's next task is offered before its task ends, open offers count")
{
  OfferInput in;
  in.waiting = {{4, 1}, {5, 1}, {6, 1}, {7, 1}};
  in.open = {{3, 1, 0}};
  in.clusters = {{2, 2}}; // two running, both busy: their next two and the prefetch, one already open
  auto p = plan_offers(in);
  REQUIRE(p.make.size() == 2);
  CHECK(p.make[0] == Offer{4, 1, 0});
  CHECK(p.make[1] == Offer{5, 1, 0});
  CHECK(p.revoke.empty());

  in.clusters = {{3, 2}}; // one idle as well: one more
  p = plan_offers(in);
  CHECK(p.make.size() == 3);

  in.clusters = {{1, 1}}; // one busy worker: its next and the prefetch, one of them open already
  in.prefetch = 0;
  p = plan_offers(in);
  CHECK(p.make.empty()); // its next task is the open one
}

TEST_CASE("study offers: a cluster whose workers are gone or only pending has its offers taken back")
{
  OfferInput in;
  in.open = {{0, 1, 0}, {1, 1, 0}, {2, 1, 1}};
  in.clusters = {{0, 0}, {1, 0}};
  const auto p = plan_offers(in);
  REQUIRE(p.revoke.size() == 2);
  CHECK(p.revoke[0] == Offer{0, 1, 0});
  CHECK(p.revoke[1] == Offer{1, 1, 0});
  CHECK(p.make.empty()); // they wait to be offered again once taken back (the rename won)
}

TEST_CASE("study offers: more offers than a cluster wants are taken back, the last tasks first")
{
  OfferInput in;
  in.open = {{5, 1, 0}, {1, 1, 0}, {3, 1, 0}, {4, 1, 0}};
  in.clusters = {{1, 1}}; // one worker, busy: its next task and the prefetch of 1
  const auto p = plan_offers(in);
  REQUIRE(p.revoke.size() == 2);
  CHECK(p.revoke[0] == Offer{4, 1, 0});
  CHECK(p.revoke[1] == Offer{5, 1, 0});
}

TEST_CASE("study offers: with nothing waiting, a cluster with idle workers and no offer gets one from a cluster "
          "holding two")
{
  OfferInput in;
  in.open = {{0, 1, 0}, {1, 1, 0}};
  in.clusters = {{2, 1}, {1, 0}};
  const auto p = plan_offers(in);
  CHECK(p.make.empty());
  REQUIRE(p.revoke.size() == 1);
  CHECK(p.revoke[0] == Offer{1, 1, 0});

  in.open = {{0, 1, 0}}; // only one: kept where it is
  CHECK(plan_offers(in).revoke.empty());
}

namespace {

model::Strategy worker(const char* id, std::int64_t wait_s, double su)
{
  model::Strategy s;
  s.id = id;
  s.nodes = 1;
  s.gpus_per_node = 1;
  s.walltime_s = 60;
  s.est_wait_s = wait_s;
  s.est_su = su;
  return s;
}

ClusterPool cluster_pool(std::vector<model::Strategy> strategies, std::vector<int> slots)
{
  ClusterPool cp;
  cp.strategies = std::move(strategies);
  cp.in.unfinished = 16;
  for (auto n : slots) {
    KindPool k;
    k.slots = n;
    cp.in.kinds.push_back(k);
  }
  return cp;
}

int workers_of(const std::vector<std::vector<std::size_t>>& p)
{
  int n = 0;
  for (const auto& c : p) {
    n += static_cast<int>(c.size());
  }
  return n;
}

} // namespace

TEST_CASE("study across: one pool over both clusters puts workers where they shorten the study for the least SU")
{
  // #41's benchmark across both testbed clusters: cluster 1 has 2 free v100s (1.0) and 6 free
  // a6000s (1.25); cluster 2 has 2 free l40s (1.6) and h100s (4.9) that start at once. 16 tasks of
  // 10 s in workers of a minute. In turns, half the pool went to cluster 2 whatever it cost.
  auto one = cluster_pool({worker("v100", 0, 1.0), worker("a6000", 0, 1.25)}, {2, 6});
  auto two = cluster_pool({worker("l40s", 0, 1.6), worker("h100", 0, 4.9)}, {2, 4});
  const auto p = plan_pool_across({one, two}, 10);
  REQUIRE(p.size() == 2);
  CHECK(std::count(p[0].begin(), p[0].end(), 0) == 2); // both v100s
  CHECK(std::count(p[1].begin(), p[1].end(), 1) == 0); // never the h100s at 4.9x
  CHECK(p[0].size() > p[1].size());                    // the cheaper cluster takes most of the pool

  // Cluster 2's SU in a unit worth a tenth (su_weights rvtb2=0.1): its l40s are the cheapest now.
  auto cheap_two = two;
  cheap_two.su_weight = 0.1;
  const auto q = plan_pool_across({one, cheap_two}, 10);
  CHECK(std::count(q[1].begin(), q[1].end(), 0) == 2);

  // --prefer cost: the v100s alone (as on one cluster).
  one.in.su_weight = two.in.su_weight = su_weight(Prefer::cost);
  const auto c = plan_pool_across({one, two}, 10);
  CHECK(c[0] == std::vector<std::size_t>{0, 0});
  CHECK(c[1].empty());
}

TEST_CASE("study across: each cluster within its own limits, %K and the tasks over all of them")
{
  // Equal strategies everywhere, room for many: the pool fills to the ceiling, each cluster to its own.
  auto one = cluster_pool({worker("a", 0, 1.0)}, {100});
  auto two = cluster_pool({worker("b", 0, 1.0)}, {100});
  one.in.limits.max_submit_jobs = 4; // 4 less the headroom of 1: 3 on cluster 1
  auto p = plan_pool_across({one, two}, 10);
  CHECK(p[0].size() == 3);
  CHECK(workers_of(p) == 16); // the tasks cap the whole
  // %K caps the whole pool, not each cluster.
  one.in.max_running = two.in.max_running = 5;
  p = plan_pool_across({one, two}, 10);
  CHECK(workers_of(p) == 5);
  CHECK(p[0].size() <= 3);
  // Workers alive count: 2 running on cluster 1 leave it 1 more, and the whole 3 more under %K.
  one.in.workers_alive = 2;
  p = plan_pool_across({one, two}, 10);
  CHECK(p[0].size() <= 1);
  CHECK(workers_of(p) == 3);
  // No cluster, no pool.
  CHECK(plan_pool_across({}, 10).empty());
}

TEST_CASE("study offers: a task's status is its latest attempt's, on whichever cluster holds it")
{
  Study st;
  st.retries = 1;
  for (int i = 0; i < 3; ++i) {
    st.tasks.push_back({i, {}, "true"});
  }
  // Cluster 0: task 0 done; task 1's attempt 1 lost (job 11 gone). Cluster 1: task 1's attempt 2
  // running on job 21 (taken from an offer, its claim not renamed yet), and an offer for task 2.
  const auto a = task_statuses(st, "0 1 10 100 0 160\n1 1 11 100 - -\n", {});
  const std::string b_listing = "2 offer 1\n1 2 21 - -\n";
  const auto b = task_statuses(st, b_listing, {"21"});
  const auto m = merge_statuses({a, b});
  REQUIRE(m.size() == 3);
  CHECK(m[0].cluster == std::optional<std::size_t>(0));
  CHECK(m[0].status.state == TaskState::done);
  CHECK(m[1].cluster == std::optional<std::size_t>(1));
  CHECK(m[1].status.state == TaskState::running);
  CHECK(m[1].status.attempts == 2);
  CHECK(m[1].status.job_id == "21");
  CHECK_FALSE(m[2].cluster);
  CHECK(m[2].status.state == TaskState::pending);
  CHECK(open_offers(b_listing) == std::map<int, int>{{2, 1}});
  CHECK(claimer_jobs(b_listing) == std::set<std::string>{"21"});
}
