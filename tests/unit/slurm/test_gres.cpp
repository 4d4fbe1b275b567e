#include "slurm/gres.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace rv;
using namespace rv::slurm;

namespace {
bool same(const std::vector<model::GpuGres>& got, const std::vector<std::pair<std::string, int>>& want)
{
  if (got.size() != want.size()) {
    return false;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i].type != want[i].first || got[i].count != want[i].second) {
      return false;
    }
  }
  return true;
}
} // namespace

TEST_CASE("parse_gres reads every GPU spelling seen in the wild")
{
  CHECK(same(*parse_gres("gpu:a100:8(S:0-1)"), {{"a100", 8}}));
  CHECK(same(*parse_gres("gpu:4"), {{"", 4}}));
  CHECK(same(*parse_gres("gpu:(null):2"), {{"", 2}}));
  CHECK(same(*parse_gres("gpu:a100_1g.10gb:7"), {{"a100_1g.10gb", 7}}));
  CHECK(same(*parse_gres("gpu:nvidia_a100_1g.5gb:2"), {{"nvidia_a100_1g.5gb", 2}}));
  CHECK(same(*parse_gres("gpu:a100:4(IDX:0-3)"), {{"a100", 4}}));
  CHECK(same(*parse_gres("gpu:a100:2(S:2,7),nsight:no_consume:1"), {{"a100", 2}}));
  CHECK(same(*parse_gres("gpu:model_a:2,gpu:model_b:2"), {{"model_a", 2}, {"model_b", 2}}));
  CHECK(same(*parse_gres("gpu:4,shard:20"), {{"", 4}}));
  CHECK(same(*parse_gres("gpu:1(IDX:0),shard:8(-/5,5/5,3/5,0/5)"), {{"", 1}}));
  CHECK(same(*parse_gres("gpu:nvidia_h100_nvl:1(S:2),VramPerGpu:no_consume:94G"), {{"nvidia_h100_nvl", 1}}));
  CHECK(same(*parse_gres("gpu:(null):0(IDX:N/A)"), {}));
  CHECK(same(*parse_gres("gpu:h100:1,shard:h10"), {{"h100", 1}}));
  CHECK(same(*parse_gres("mps:0,gpfs:gpu:0"), {}));
  CHECK(parse_gres("(null)")->empty());
  CHECK(parse_gres("")->empty());
}

TEST_CASE("parse_gres drops a cut last token but rejects a malformed middle one")
{
  CHECK(same(*parse_gres("pfsdir:scratch:0,gpu:v100-32g:2(S:0-1),gpu:v1"), {{"v100-32g", 2}}));
  CHECK_FALSE(parse_gres("gpu:a100:x,mps:0").has_value());
}

TEST_CASE("parse_tres_gpus prefers typed entries and keeps an untyped remainder")
{
  CHECK(
      same(*parse_tres_gpus("billing=112,cpu=36,gres/gpu:rtx2080ti=4,gres/gpu=4,mem=180G,node=1"), {{"rtx2080ti", 4}}));
  CHECK(same(*parse_tres_gpus("cpu=9,gres/cpu=9,gres/gpu:a100_3g.20gb=1,gres/gpu=1,mem=60G"), {{"a100_3g.20gb", 1}}));
  CHECK(same(*parse_tres_gpus("cpu=32,mem=250G,billing=154,gres/gpu=4"), {{"", 4}}));
  CHECK(same(*parse_tres_gpus("gres/gpu=6,gres/gpu:a100=4"), {{"a100", 4}, {"", 2}}));
  CHECK(same(*parse_tres_gpus("billing=102410,cpu=8,gres/gpu:tesa100=1+"), {{"tesa100", 1}}));
  CHECK(same(*parse_tres_gpus("gpu:tesla:4"), {{"tesla", 4}}));
  CHECK(same(*parse_tres_gpus("gres:gpu:2"), {{"", 2}}));
  CHECK(same(*parse_tres_gpus("gres/gpu:a100=2"), {{"a100", 2}}));
  CHECK(parse_tres_gpus("cpu=4,mem=8G").value().empty());
  CHECK(parse_tres_gpus("(null)").value().empty());
  CHECK(parse_tres_map("cpu=120,mem=515456M,").at("mem") == "515456M");
}

TEST_CASE("parse_gres and parse_tres_gpus reject GPU counts that add up past an int")
{
  auto error_of = [](const Result<std::vector<model::GpuGres>>& r) {
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::parse);
    return r.error().message;
  };
  // The sum of a repeated type, and the total over types, used to overflow int.
  CHECK(error_of(parse_gres("gpu:a:2147483647,gpu:a:1")) ==
        "GPU counts in GRES 'gpu:a:2147483647,gpu:a:1' add up to more than 2147483647");
  CHECK(error_of(parse_gres("gpu:a:2147483647,gpu:b:1")) ==
        "GPU counts in GRES 'gpu:a:2147483647,gpu:b:1' add up to more than 2147483647");
  CHECK(error_of(parse_tres_gpus("gres/gpu:a=2147483647,gres/gpu:b=1")) ==
        "GPU counts in TRES 'gres/gpu:a=2147483647,gres/gpu:b=1' add up to more than 2147483647");
  CHECK(same(*parse_gres("gpu:a:2147483646,gpu:b:1"), {{"a", 2147483646}, {"b", 1}}));
  CHECK(total_gpus(*parse_gres("gpu:a:2147483646,gpu:b:1")) == 2147483647);
}

TEST_CASE("parse_gres rejects a GPU type name no GPU has before anything matches a pattern on it")
{
  // 50,000 characters overflowed the stack in the MIG-pattern regex downstream.
  auto huge = "gpu:" + std::string(50'000, '1') + ":4";
  auto r = parse_gres(huge);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::parse);
  CHECK(r.error().message == fmt::format("GPU type '{}...' in GRES '{}...' is longer than 128 characters",
                                         std::string(60, '1'), "gpu:" + std::string(56, '1')));
  auto t = parse_tres_gpus("gres/gpu:" + std::string(50'000, 'a') + "=4");
  REQUIRE_FALSE(t);
  CHECK(t.error().message.ends_with("is longer than 128 characters"));
  auto longest = std::string(128, 'x');
  CHECK(same(*parse_gres("gpu:" + longest + ":2"), {{longest, 2}}));
}
