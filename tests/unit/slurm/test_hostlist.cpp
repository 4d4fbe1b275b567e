#include "slurm/hostlist.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::slurm;
using V = std::vector<std::string>;

TEST_CASE("expand_hostlist handles ranges, padding, groups and several brackets")
{
  CHECK(*expand_hostlist("a100-[1-2]") == V{"a100-1", "a100-2"});
  CHECK(*expand_hostlist("gpu[01-03,07]") == V{"gpu01", "gpu02", "gpu03", "gpu07"});
  CHECK(*expand_hostlist("a[1-2],b3") == V{"a1", "a2", "b3"});
  CHECK(*expand_hostlist("n[1-2]-ib[3-4]") == V{"n1-ib3", "n1-ib4", "n2-ib3", "n2-ib4"});
  CHECK(*expand_hostlist("med[0105-0106,0136]") == V{"med0105", "med0106", "med0136"});
  CHECK(*expand_hostlist("3dgi[1-2],100plus") == V{"3dgi1", "3dgi2", "100plus"});
  CHECK(*expand_hostlist("node7") == V{"node7"});
  CHECK(expand_hostlist("(null)")->empty());
  CHECK(expand_hostlist("")->empty());
}

TEST_CASE("expand_hostlist rejects malformed lists")
{
  CHECK_FALSE(expand_hostlist("a[1-2").has_value());
  CHECK_FALSE(expand_hostlist("a[3-1]").has_value());
  CHECK_FALSE(expand_hostlist("a[x]").has_value());
  CHECK(expand_hostlist("r1i5n...").has_value()); // an edited name is still a name
  CHECK(expand_hostlist("a[1-2000000]").error().code == ErrorCode::parse);
}

TEST_CASE("compress_hostlist groups by prefix and padding and round-trips")
{
  CHECK(compress_hostlist({"gpu01", "gpu02", "gpu03", "gpu07", "login1"}) == "gpu[01-03,07],login1");
  CHECK(compress_hostlist({"a1"}) == "a1");
  CHECK(compress_hostlist({"head", "b2", "b1"}) == "head,b[1-2]");
  auto hosts = *expand_hostlist("ccc[0035-0036,0085-0090],golub[113-116]");
  CHECK(*expand_hostlist(compress_hostlist(hosts)) == hosts);
}
