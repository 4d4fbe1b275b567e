// The cached association facts are read again when Slurm refuses a submission for an association
// reason (app/run/plan/assoc_cache.hpp), and only then. Their lifetime rules: test_discovery.cpp.

#include "app/run/launch/submit.hpp"
#include "app/run/plan/assoc_cache.hpp"
#include "core/store/cache_store.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

namespace {

int assoc_files(const std::filesystem::path& dir)
{
  int n = 0;
  if (std::filesystem::exists(dir)) {
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
      n += f.path().filename().string().starts_with("assoc-") ? 1 : 0;
    }
  }
  return n;
}

} // namespace

TEST_CASE("association refusals: account, QOS and accounting policy, not node configuration")
{
  CHECK(is_association_refusal("Invalid account or account/partition combination specified"));
  CHECK(is_association_refusal("Invalid qos specification"));
  CHECK(
      is_association_refusal("Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"));
  CHECK_FALSE(is_association_refusal("Requested node configuration is not available"));
  CHECK_FALSE(is_association_refusal(""));
}

TEST_CASE("submission refused for an association reason: the association facts are read again at once")
{
  World w("assoc-refused");
  store::CacheStore cache(w.dir / "cache");
  w.env.cache = &cache;
  w.cluster.user_name = "alice";
  expect_prepare(w.cluster);
  SUBCASE("an account refusal: sacctmgr runs after the sbatch batch, the cache is rewritten")
  {
    expect_sbatch(w.cluster, "", "Invalid account or account/partition combination specified");
    expect_sbatch(w.cluster, "102");
    for (int i = 0; i < 3; ++i) {
      w.cluster.on([](const auto& a) { return a[0] == "sacctmgr"; }, Cluster::ok("research|||||\n"));
    }
    // How early jobs end: accounting too, read again with the association facts.
    std::string ends = "gpu 1 1";
    for (int i = 0; i < 20; ++i) {
      ends += " 0";
    }
    w.cluster.on([](const auto& a) { return a.back() == "rv-job-ends"; }, Cluster::ok(ends + "\n"));
    auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
    REQUIRE_MESSAGE(launched, launched.error().message);
    CHECK(w.cluster.done());
    CHECK(w.cluster.unexpected.empty());
    CHECK(assoc_files(w.dir / "cache") == 1);
  }
  SUBCASE("a refusal for another reason: no sacctmgr")
  {
    expect_sbatch(w.cluster, "", "Requested node configuration is not available");
    expect_sbatch(w.cluster, "102");
    auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
    REQUIRE_MESSAGE(launched, launched.error().message);
    CHECK(w.cluster.done());
    CHECK(w.cluster.unexpected.empty());
    CHECK(assoc_files(w.dir / "cache") == 0);
  }
  SUBCASE("association facts not cached apart (assoc_cache 0): nothing to refresh")
  {
    w.settings.assoc_cache_s = 0;
    expect_sbatch(w.cluster, "", "Invalid qos specification");
    expect_sbatch(w.cluster, "102");
    auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
    REQUIRE_MESSAGE(launched, launched.error().message);
    CHECK(w.cluster.unexpected.empty());
    CHECK(assoc_files(w.dir / "cache") == 0);
  }
}
