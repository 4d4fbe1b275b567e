#include "slurm/pending_reason.hpp"

#include <doctest/doctest.h>

using namespace rv::slurm;

TEST_CASE("pending reasons: Slurm's words become plain words, hopeless ones are marked in the same table")
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

TEST_CASE("pending reasons: every reason of Slurm 22.05's list gets a plain sentence, not its code")
{
  // job_state_reason_string of Slurm 22.05 (src/common/slurm_protocol_defs.c), pending and ended.
  const char* all[] = {
      "Prolog",
      "Priority",
      "Dependency",
      "Resources",
      "PartitionNodeLimit",
      "PartitionTimeLimit",
      "PartitionDown",
      "PartitionInactive",
      "JobHeldAdmin",
      "JobHeldUser",
      "BeginTime",
      "Licenses",
      "AssociationJobLimit",
      "AssociationResourceLimit",
      "AssociationTimeLimit",
      "Reservation",
      "ReqNodeNotAvail",
      "FrontEndDown",
      "SchedDefer",
      "NodeDown",
      "BadConstraints",
      "SystemFailure",
      "JobLaunchFailure",
      "NonZeroExitCode",
      "RaisedSignal",
      "TimeLimit",
      "InactiveLimit",
      "InvalidAccount",
      "InvalidQOS",
      "QOSUsageThreshold",
      "QOSJobLimit",
      "QOSResourceLimit",
      "QOSTimeLimit",
      "Cleaning",
      "QOSNotAllowed",
      "AccountNotAllowed",
      "DependencyNeverSatisfied",
      "QOSGrpCpuLimit",
      "QOSGrpCPUMinutesLimit",
      "QOSGrpCPURunMinutesLimit",
      "QOSGrpJobsLimit",
      "QOSGrpMemLimit",
      "QOSGrpNodeLimit",
      "QOSGrpSubmitJobsLimit",
      "QOSGrpWallLimit",
      "QOSMaxCpuPerJobLimit",
      "QOSMaxCpuMinutesPerJobLimit",
      "QOSMaxNodePerJobLimit",
      "QOSMaxWallDurationPerJobLimit",
      "QOSMaxCpuPerUserLimit",
      "QOSMaxJobsPerUserLimit",
      "QOSMaxNodePerUserLimit",
      "QOSMaxSubmitJobPerUserLimit",
      "QOSMinCpuNotSatisfied",
      "AssocGrpCpuLimit",
      "AssocGrpCPUMinutesLimit",
      "AssocGrpCPURunMinutesLimit",
      "AssocGrpJobsLimit",
      "AssocGrpMemLimit",
      "AssocGrpNodeLimit",
      "AssocGrpSubmitJobsLimit",
      "AssocGrpWallLimit",
      "AssocMaxJobsLimit",
      "AssocMaxCpuPerJobLimit",
      "AssocMaxCpuMinutesPerJobLimit",
      "AssocMaxNodePerJobLimit",
      "AssocMaxWallDurationPerJobLimit",
      "AssocMaxSubmitJobLimit",
      "JobHoldMaxRequeue",
      "JobArrayTaskLimit",
      "BurstBufferResources",
      "BurstBufferStageIn",
      "BurstBufferOperation",
      "PowerNotAvail",
      "PowerReserved",
      "AssocGrpUnknown",
      "AssocGrpUnknownMinutes",
      "AssocGrpUnknownRunMinutes",
      "AssocMaxUnknownPerJob",
      "AssocMaxUnknownPerNode",
      "AssocMaxUnknownMinutesPerJob",
      "AssocMaxCpuPerNode",
      "AssocGrpMemMinutes",
      "AssocGrpMemRunMinutes",
      "AssocMaxMemPerJob",
      "AssocMaxMemPerNode",
      "AssocMaxMemMinutesPerJob",
      "AssocGrpNodeMinutes",
      "AssocGrpNodeRunMinutes",
      "AssocMaxNodeMinutesPerJob",
      "AssocGrpEnergy",
      "AssocGrpEnergyMinutes",
      "AssocGrpEnergyRunMinutes",
      "AssocMaxEnergyPerJob",
      "AssocMaxEnergyPerNode",
      "AssocMaxEnergyMinutesPerJob",
      "AssocGrpGRES",
      "AssocGrpGRESMinutes",
      "AssocGrpGRESRunMinutes",
      "AssocMaxGRESPerJob",
      "AssocMaxGRESPerNode",
      "AssocMaxGRESMinutesPerJob",
      "AssocGrpLicense",
      "AssocGrpLicenseMinutes",
      "AssocGrpLicenseRunMinutes",
      "AssocMaxLicensePerJob",
      "AssocMaxLicenseMinutesPerJob",
      "AssocGrpBB",
      "AssocGrpBBMinutes",
      "AssocGrpBBRunMinutes",
      "AssocMaxBBPerJob",
      "AssocMaxBBPerNode",
      "AssocMaxBBMinutesPerJob",
      "QOSGrpUnknown",
      "QOSGrpUnknownMinutes",
      "QOSGrpUnknownRunMinutes",
      "QOSMaxUnknownPerJob",
      "QOSMaxUnknownPerNode",
      "QOSMaxUnknownPerUser",
      "QOSMaxUnknownMinutesPerJob",
      "QOSMinUnknown",
      "QOSMaxCpuPerNode",
      "QOSGrpMemoryMinutes",
      "QOSGrpMemoryRunMinutes",
      "QOSMaxMemoryPerJob",
      "QOSMaxMemoryPerNode",
      "QOSMaxMemoryPerUser",
      "QOSMaxMemoryMinutesPerJob",
      "QOSMinMemory",
      "QOSGrpNodeMinutes",
      "QOSGrpNodeRunMinutes",
      "QOSMaxNodeMinutesPerJob",
      "QOSMinNode",
      "QOSGrpEnergy",
      "QOSGrpEnergyMinutes",
      "QOSGrpEnergyRunMinutes",
      "QOSMaxEnergyPerJob",
      "QOSMaxEnergyPerNode",
      "QOSMaxEnergyPerUser",
      "QOSMaxEnergyMinutesPerJob",
      "QOSMinEnergy",
      "QOSGrpGRES",
      "QOSGrpGRESMinutes",
      "QOSGrpGRESRunMinutes",
      "QOSMaxGRESPerJob",
      "QOSMaxGRESPerNode",
      "QOSMaxGRESPerUser",
      "QOSMaxGRESMinutesPerJob",
      "QOSMinGRES",
      "QOSGrpLicense",
      "QOSGrpLicenseMinutes",
      "QOSGrpLicenseRunMinutes",
      "QOSMaxLicensePerJob",
      "QOSMaxLicensePerUser",
      "QOSMaxLicenseMinutesPerJob",
      "QOSMinLicense",
      "QOSGrpBB",
      "QOSGrpBBMinutes",
      "QOSGrpBBRunMinutes",
      "QOSMaxBBPerJob",
      "QOSMaxBBPerNode",
      "QOSMaxBBPerUser",
      "QOSMinBB",
      "DeadLine",
      "MaxBBPerAccount",
      "MaxCpuPerAccount",
      "MaxEnergyPerAccount",
      "MaxGRESPerAccount",
      "MaxNodePerAccount",
      "MaxLicensePerAccount",
      "MaxMemoryPerAccount",
      "MaxUnknownPerAccount",
      "MaxJobsPerAccount",
      "MaxSubmitJobsPerAccount",
      "PartitionConfig",
      "AccountingPolicy",
      "FedJobLock",
      "OutOfMemory",
      "MaxMemPerLimit",
      "AssocGrpBilling",
      "AssocGrpBillingMinutes",
      "AssocGrpBillingRunMinutes",
      "AssocMaxBillingPerJob",
      "AssocMaxBillingPerNode",
      "AssocMaxBillingMinutesPerJob",
      "QOSGrpBilling",
      "QOSGrpBillingMinutes",
      "QOSGrpBillingRunMinutes",
      "QOSMaxBillingPerJob",
      "QOSMaxBillingPerNode",
      "QOSMaxBillingPerUser",
      "QOSMaxBillingMinutesPerJob",
      "MaxBillingPerAccount",
      "QOSMinBilling",
      "ReservationDeleted",
  };
  for (const char* code : all) {
    CAPTURE(code);
    auto r = explain_reason(code);
    CHECK(r.known);
    CHECK(r.code == code);
    CHECK(r.plain != code);
    CHECK(r.kind != ReasonKind::unknown);
  }
}

TEST_CASE("pending reasons: the limit family reads by its parts")
{
  auto user = explain_reason("QOSMaxGRESPerUser");
  CHECK(user.kind == ReasonKind::your_jobs);
  CHECK(user.plain == "you already use the QOS's GPU limit: waits for your other jobs");
  CHECK(user.hint.find("other jobs end") != std::string::npos);
  auto budget = explain_reason("AssocGrpGRESMinutes");
  CHECK(budget.kind == ReasonKind::budget);
  CHECK(budget.plain == "your account has used up its GPU-minutes budget");
  CHECK_FALSE(budget.hopeless);
  auto group = explain_reason("AssocGrpGRES");
  CHECK(group.plain == "your account's GPUs are all in use");
  CHECK(group.kind == ReasonKind::group);
  auto run = explain_reason("QOSGrpGRESRunMinutes");
  CHECK(run.plain.find("GPU-minutes") != std::string::npos);
  CHECK(run.hint.find("shorter --time") != std::string::npos);
  auto per_job = explain_reason("QOSMaxGRESPerJob");
  CHECK(per_job.hopeless);
  CHECK(per_job.plain == "it asks for more GPUs than the QOS allows per job");
  CHECK(explain_reason("QOSMaxWallDurationPerJobLimit").plain == "its time limit is above the QOS's maximum");
  CHECK(explain_reason("AssocMaxNodePerJobLimit").hopeless); // Slurm's spelling (the old table had "Nodes")
  CHECK(explain_reason("AssocMaxJobsLimit").plain == "you already run the most jobs your account allows");
  CHECK(explain_reason("QOSMinGRES").hopeless);
  CHECK(explain_reason("MaxGRESPerAccount").kind == ReasonKind::group);
  CHECK(explain_reason("QOSGrpCPUMinutesLimit").plain == "the QOS has used up its CPU-minutes budget");
  // Not a limit name, though it starts like one.
  CHECK_FALSE(explain_reason("QOSSomethingNew").known);
  CHECK_FALSE(explain_reason("AssocGrpGRESPerFortnight").known);
}

TEST_CASE("pending reasons: Slurm's detail after the word, parentheses, case and the old ReqNodeNotAvail text")
{
  auto r = explain_reason("ReqNodeNotAvail, UnavailableNodes:a100-[1-2]");
  CHECK(r.code == "ReqNodeNotAvail");
  CHECK(r.detail == "UnavailableNodes:a100-[1-2]");
  CHECK(r.kind == ReasonKind::nodes);
  CHECK(r.hint.find("--exclude") != std::string::npos);
  CHECK(explain_reason("(Priority)").code == "Priority");
  CHECK(explain_reason("resources").plain == "waiting for free GPUs");
  auto old =
      explain_reason("Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions");
  CHECK(old.code == "ReqNodeNotAvail");
  CHECK(explain_reason("JobHeldUser").hint == "scontrol release JOBID");
  CHECK(explain_reason("PartitionTimeLimit").hint.find("shorter --time") != std::string::npos);
  CHECK(to_string(ReasonKind::your_jobs) == "your_jobs");
  CHECK(to_string(ReasonKind::unknown) == "unknown");
  auto unknown = explain_reason("SomeFutureReason");
  CHECK(unknown.kind == ReasonKind::unknown);
  CHECK(unknown.hint.empty());
}
