// Planning across clusters (app/run/plan/across_plan.hpp): two hosts that reach one cluster.

#include "app/run/plan/across_plan.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;

namespace {

ClusterRun reached(const std::string& host, const std::string& name, const std::string& controller)
{
  ClusterRun c;
  c.host = host;
  c.run.cluster.config.cluster_name = name;
  if (!controller.empty()) {
    c.run.cluster.config.controller = controller;
  }
  return c;
}

} // namespace

TEST_CASE("drop_same_cluster: an alias and its twin reach one cluster, the first named stays, the other is said")
{
  std::vector<ClusterRun> clusters{reached("rvtb", "rvtest", "vm(localhost)"),
                                   reached("rvtb2", "rvtest2", "vm(localhost)"),
                                   reached("rvtb-wan", "rvtest", "vm(localhost)")};
  const auto dropped = drop_same_cluster(clusters);
  REQUIRE(clusters.size() == 2);
  CHECK(clusters[0].host == "rvtb");
  CHECK(clusters[1].host == "rvtb2");
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0].host == "rvtb-wan");
  CHECK(dropped[0].reason == "it reaches cluster rvtest, as rvtb does: a cluster is not raced against itself");
}

TEST_CASE("drop_same_cluster: one name on two controllers, or no name, is two clusters")
{
  std::vector<ClusterRun> clusters{reached("a", "slurm", "ctl-a(10.0.0.1)"), reached("b", "slurm", "ctl-b(10.0.0.2)"),
                                   reached("c", "", ""), reached("d", "", "")};
  CHECK(drop_same_cluster(clusters).empty());
  CHECK(clusters.size() == 4);
}
