#include "slurm/assoc_mgr.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::slurm;

namespace {

std::string captured(const std::string& name)
{
  std::ifstream in(std::string(RV_TEST_DATA_DIR) + "/slurm/22.05/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("assoc_mgr: the captured chain root > rvacct > rvtest with the limits that are set")
{
  auto text = captured("scontrol_show_assoc_mgr.limits.txt");
  REQUIRE_FALSE(text.empty());
  auto r = parse_assoc_mgr(text);
  REQUIRE(r.has_value());
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].account == "root");
  CHECK((*r)[0].limits.empty()); // every limit printed as N
  CHECK((*r)[1].account == "rvacct");
  CHECK((*r)[1].user.empty());
  CHECK((*r)[1].parent == "root");
  REQUIRE((*r)[1].limits.size() == 2);
  CHECK((*r)[1].limits[0].name == "GrpTRESMins");
  CHECK((*r)[1].limits[0].tres == "billing");
  CHECK((*r)[1].limits[0].limit == 600000);
  CHECK((*r)[1].limits[0].used == 0);
  CHECK((*r)[1].limits[1].tres == "gres/gpu");
  CHECK((*r)[1].limits[1].limit == 50000);
  CHECK((*r)[2].user == "rvtest"); // UserName=rvtest(1001)
  REQUIRE((*r)[2].limits.size() == 1);
  CHECK((*r)[2].limits[0].name == "GrpJobs");
  CHECK((*r)[2].limits[0].tres.empty());
  CHECK((*r)[2].limits[0].limit == 40);
}

TEST_CASE("assoc_mgr: used values, fractions and a scalar GrpWall")
{
  auto r = parse_assoc_mgr("ClusterName=c Account=a UserName= Partition=gpu Priority=0 ID=2\n"
                           "    GrpTRESMins=cpu=N(12),billing=1000(532),gres/gpu=60(61)\n"
                           "    GrpWall=600(12.50) GrpJobs=N(3)\n"
                           "    GrpTRESRunMins=billing=200(199)\n");
  REQUIRE(r.has_value());
  REQUIRE(r->size() == 1);
  const auto& a = r->front();
  CHECK(a.partition == "gpu");
  REQUIRE(a.limits.size() == 4);
  CHECK(a.limits[0].used == 532);
  CHECK(a.limits[1].used == 61); // over the limit is shown as it is
  CHECK(a.limits[2].name == "GrpWall");
  CHECK(a.limits[2].used == doctest::Approx(12.5));
  CHECK(a.limits[3].name == "GrpTRESRunMins");
}

TEST_CASE("assoc_mgr: banner only, prose and garbage give no records")
{
  CHECK(parse_assoc_mgr("Current Association Manager state\n\nAssociation Records\n\n")->empty());
  CHECK(parse_assoc_mgr("")->empty());
  auto r = parse_assoc_mgr("ClusterName=c Account=a\n GrpTRESMins=billing=x(1),cpu=5(,gres/gpu\n");
  REQUIRE(r.has_value());
  CHECK(r->front().limits.empty());
}

TEST_CASE("assoc_mgr: the argv")
{
  CHECK(assoc_mgr_argv("alice") ==
        std::vector<std::string>{"scontrol", "show", "assoc_mgr", "users=alice", "flags=assoc"});
}
