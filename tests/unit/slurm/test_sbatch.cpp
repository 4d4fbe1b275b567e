#include "slurm/sbatch.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::slurm;

TEST_CASE("parse_test_only reads every version of the Job line")
{
  auto e = parse_test_only("sbatch: Job 16 to start at 2026-11-22T04:05:42 using 1 processors on nodes a100-2 in "
                           "partition gpu-a100\n");
  REQUIRE(e.has_value());
  CHECK(e->job_id == "16");
  CHECK(format_cluster_time(e->start) == "2026-11-22T04:05:42");
  CHECK(e->processors == 1);
  CHECK(e->nodes == "a100-2");
  CHECK(e->partition == "gpu-a100");

  e = parse_test_only("sbatch: Job 746602 to start at 2026-09-30T03:15:46 a using 8 processors on nodes "
                      "spcc-a100g03 in partition GPU-1A\r\n");
  REQUIRE(e.has_value());
  CHECK(e->partition == "GPU-1A");

  e = parse_test_only("sbatch: Job 9 to start at 2026-09-30T03:15:46 on cluster west a using 8 processors on nodes "
                      "n[1-2] in partition p\n  Preempts: 3,4\n");
  REQUIRE(e.has_value());
  CHECK(e->cluster == "west");
  CHECK(e->nodes == "n[1-2]");
  CHECK(e->preempts == std::vector<std::string>{"3", "4"});

  e = parse_test_only("sbatch: Job 5 to start at 2017-01-01T00:00:00 using 4 processors on n1\n"); // <= 17.11 / het
  REQUIRE(e.has_value());
  CHECK(e->partition.empty());
  CHECK(e->nodes == "n1");

  e = parse_test_only("sbatch: Verification: ***PASSED***\nsbatch: Job 5 to start at 2026-01-01T00:00:00 using 4 "
                      "processors on nodes n1 in partition p\n");
  REQUIRE(e.has_value());
  CHECK(e->messages == std::vector<std::string>{"Verification: ***PASSED***"});
}

TEST_CASE("parse_test_only turns refusals into slurm_rejected and odd text into parse errors")
{
  auto e = parse_test_only("allocation failure: Requested node configuration is not available\n");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == ErrorCode::slurm_rejected);
  CHECK(e.error().message.find("Requested node configuration is not available") != std::string::npos);
  e = parse_test_only("sbatch: error: Batch job submission failed: Invalid account or account/partition combination\n");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == ErrorCode::slurm_rejected);
  e = parse_test_only("sbatch: Job 1 to start at 14:24:22 using 1 processors on nodes n1 in partition p\n");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == ErrorCode::parse);
  CHECK_FALSE(parse_test_only("").has_value());
}

TEST_CASE("parse_sbatch_parsable reads an id and an optional cluster")
{
  CHECK(parse_sbatch_parsable("123\n")->job_id == "123");
  auto s = parse_sbatch_parsable("sbatch: warning: something\n123;west\n");
  REQUIRE(s.has_value());
  CHECK(s->job_id == "123");
  CHECK(s->cluster == "west");
  CHECK_FALSE(parse_sbatch_parsable("Submitted batch job\n").has_value());
}
