#include "strategy/gpu_types.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::strategy;

TEST_CASE("gpu types: derived per partition and type")
{
  auto types = derive_gpu_types(test::campus(), test::campus_profile());
  REQUIRE(types.size() == 4);
  const auto& a = types[0];
  CHECK(a.partition == "gpu-a100");
  CHECK(a.gpu_type == "a100_80");
  CHECK(a.nodes_total == 4);
  CHECK(a.usable_nodes == 3);
  CHECK(a.gpus_per_node == 8);
  CHECK(a.cpus_per_node == 128);
  CHECK(a.mem_mb_per_node == 1'000'000);
  CHECK(a.free_gpus == 2 + 8 + 8);
  CHECK(a.usable_nodes_with(8) == 3);
  CHECK(a.usable_nodes_with(9) == 0);
  CHECK_FALSE(a.mig_like);
  CHECK(types[2].mig_like);
}

TEST_CASE("gpu types: node membership from either side, min over usable nodes")
{
  model::Cluster c;
  c.partitions = {test::partition("p", -1)};
  c.partitions[0].nodes = {"n1", "n2"};
  c.nodes = {test::gpu_node("n1", "", "l40s", 4, 64, 500'000), test::gpu_node("n2", "p", "l40s", 2, 32, 250'000),
             test::gpu_node("n3", "p", "l40s", 4, 16, 100'000, false)};
  c.nodes[0].partitions.clear();
  auto types = derive_gpu_types(c, {});
  REQUIRE(types.size() == 1);
  CHECK(types[0].nodes_total == 3);
  CHECK(types[0].usable_nodes == 2);
  CHECK(types[0].gpus_per_node == 4);
  CHECK(types[0].cpus_per_node == 32);
  CHECK(types[0].mem_mb_per_node == 250'000);
  CHECK(types[0].usable_nodes_with(3) == 1);
}

TEST_CASE("gpu types: MIG-like detection")
{
  Profile p;
  CHECK(is_mig_like(p, "1g.10gb"));
  CHECK(is_mig_like(p, "3g.40GB"));
  CHECK_FALSE(is_mig_like(p, "a100_80"));
  CHECK_FALSE(is_mig_like(p, ""));
  p.types["a100_80"].mig = true;
  CHECK(is_mig_like(p, "a100_80"));
  p.mig_pattern = "mig-.*";
  CHECK(is_mig_like(p, "mig-small"));
  CHECK_FALSE(is_mig_like(p, "1g.10gb"));
}

TEST_CASE("gpu types: is_mig_like never runs the pattern on a type name no GPU has")
{
  Profile p;
  // 50,000 digits overflowed the stack inside std::regex_search with the default pattern.
  CHECK_FALSE(is_mig_like(p, std::string(50'000, '1')));
  CHECK_FALSE(is_mig_like(p, std::string(50'000, '1') + "g.10gb"));
  CHECK(is_mig_like(p, std::string(model::max_gpu_type_length - 6, '1') + "g.10gb"));
}

TEST_CASE("gpu types: --type resolution")
{
  auto profile = test::campus_profile();
  auto types = derive_gpu_types(test::campus(), profile);
  auto exact = resolve_type("v100", types, profile);
  REQUIRE(exact);
  CHECK(exact->types == std::vector<std::string>{"v100"});
  auto alias = resolve_type("a100", types, profile);
  REQUIRE(alias);
  CHECK(alias->types == std::vector<std::string>{"a100_80"});
  CHECK(alias->constraint == "gpupod&a100_80gb");
  auto caseless = resolve_type("V100", types, profile);
  REQUIRE(caseless);
  CHECK(caseless->types == std::vector<std::string>{"v100"});
  auto alias_case = resolve_type("HOPPER", types, profile);
  REQUIRE(alias_case);
  CHECK(alias_case->types == std::vector<std::string>{"h200"});

  auto unknown = resolve_type("h20", types, profile);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::usage);
  CHECK(unknown.error().message == "unknown GPU type 'h20'");
  CHECK(unknown.error().hint.starts_with("did you mean 'h200'?"));
  CHECK(unknown.error().hint.find("known types:") != std::string::npos);
  auto far = resolve_type("tpu", types, profile);
  REQUIRE_FALSE(far);
  CHECK(far.error().hint.starts_with("known types:"));
}

TEST_CASE("gpu types: several types at once (-t a,b, a task file's gpu_types)")
{
  auto profile = test::campus_profile();
  auto types = derive_gpu_types(test::campus(), profile);
  auto two = resolve_type("v100,HOPPER", types, profile);
  REQUIRE(two);
  CHECK(two->types == std::vector<std::string>{"v100", "h200"});
  CHECK(two->partition.empty());
  CHECK(two->how.starts_with("any of several"));
  auto repeated = resolve_type("v100,v100", types, profile);
  REQUIRE(repeated);
  CHECK(repeated->types == std::vector<std::string>{"v100"});
  auto unknown = resolve_type("v100,h20", types, profile);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message == "unknown GPU type 'h20'");
  auto empty = resolve_type("v100,", types, profile);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message == "--type 'v100,' has an empty name");
  // An alias limited by a constraint cannot be merged with other types.
  auto limited = resolve_type("a100,v100", types, profile);
  REQUIRE_FALSE(limited);
  CHECK(limited.error().message == "--type a100,v100: 'a100' is an alias limited to a partition or a constraint");
}
