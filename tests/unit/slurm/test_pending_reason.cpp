#include "slurm/pending_reason.hpp"

#include <doctest/doctest.h>

using namespace rv::slurm;

TEST_CASE("pending reasons: Slurm's words become plain words; hopeless ones are marked in the same table")
{
  CHECK(plain_reason("Resources") == "waiting for free GPUs");
  CHECK(plain_reason("Priority") == "other jobs are ahead in the queue");
  CHECK(plain_reason("QOSMaxGRESPerUser").find("QOS's GPU limit") != std::string::npos);
  CHECK(plain_reason("ReqNodeNotAvail").find("down, drained or reserved") != std::string::npos);
  CHECK(plain_reason("Dependency") == "waiting for the job it depends on");
  CHECK(plain_reason("BeginTime") == "not allowed to start before its begin time");
  CHECK(plain_reason("") == "waiting to be scheduled");
  CHECK(plain_reason("None") == "waiting to be scheduled");
  CHECK(plain_reason("SomeFutureReason") == "SomeFutureReason"); // unknown: as Slurm says it
  CHECK(is_hopeless_reason("PartitionTimeLimit"));
  CHECK(is_hopeless_reason("QOSMaxGRESPerJob"));
  CHECK_FALSE(is_hopeless_reason("QOSMaxGRESPerUser")); // clears when the user's other jobs end
  CHECK_FALSE(is_hopeless_reason("Resources"));
  CHECK_FALSE(is_hopeless_reason("SomeFutureReason"));
}
