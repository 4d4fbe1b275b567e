#include "slurm/pending_reason.hpp"

#include <array>

namespace rv::slurm {
namespace {

struct Reason {
  std::string_view slurm; // as squeue %r and scontrol Reason= print it
  std::string_view plain;
  bool hopeless; // no amount of waiting clears it: the race gives the sibling up
};

// Slurm 22.05's reasons a GPU job meets (src/common/slurm_protocol_defs.c, job_reason_string).
constexpr std::array k_reasons = {
    Reason{"Resources", "waiting for free GPUs", false},
    Reason{"Priority", "other jobs are ahead in the queue", false},
    Reason{"Dependency", "waiting for the job it depends on", false},
    Reason{"DependencyNeverSatisfied", "its dependency can never be satisfied", true},
    Reason{"BeginTime", "not allowed to start before its begin time", false},
    Reason{"ReqNodeNotAvail", "the nodes it can use are down, drained or reserved", false},
    Reason{"NodeDown", "a node it needs is down", false},
    Reason{"Reservation", "waiting for its reservation to start", false},
    Reason{"Licenses", "waiting for licenses", false},
    Reason{"JobHeldUser", "held by you (scontrol release releases it)", false},
    Reason{"JobHeldAdmin", "held by an administrator", false},
    Reason{"launch failed requeued held", "its launch failed; held by Slurm", false},
    Reason{"Cleaning", "its node is cleaning up after a job", false},
    Reason{"Prolog", "its node is running the prolog", false},
    Reason{"QOSMaxGRESPerUser", "you already use your QOS's GPU limit: waits for your other jobs", false},
    Reason{"QOSMaxJobsPerUserLimit", "you already run your QOS's maximum number of jobs", false},
    Reason{"QOSMaxCpuPerUserLimit", "you already use your QOS's CPU limit", false},
    Reason{"QOSMaxMemoryPerUser", "you already use your QOS's memory limit", false},
    Reason{"QOSMaxNodePerUserLimit", "you already use your QOS's node limit", false},
    Reason{"QOSGrpGRES", "the QOS's GPUs are all in use", false},
    Reason{"QOSGrpCpuLimit", "the QOS's CPUs are all in use", false},
    Reason{"QOSGrpMemLimit", "the QOS's memory is all in use", false},
    Reason{"QOSGrpNodeLimit", "the QOS's nodes are all in use", false},
    Reason{"QOSGrpJobsLimit", "the QOS runs its maximum number of jobs", false},
    Reason{"AssocGrpGRES", "your account's GPUs are all in use", false},
    Reason{"AssocGrpCpuLimit", "your account's CPUs are all in use", false},
    Reason{"AssocGrpMemLimit", "your account's memory is all in use", false},
    Reason{"AssocGrpNodeLimit", "your account's nodes are all in use", false},
    Reason{"AssocGrpJobsLimit", "your account runs its maximum number of jobs", false},
    Reason{"AssocMaxJobsLimit", "you already run your account's maximum number of jobs", false},
    Reason{"AssocGrpBillingMinutes", "your account has used up its billing minutes", false},
    Reason{"AssocGrpGRESMinutes", "your account has used up its GPU minutes", false},
    Reason{"PartitionTimeLimit", "its time limit is above the partition's MaxTime", true},
    Reason{"PartitionNodeLimit", "it asks for more nodes than the partition allows", true},
    Reason{"PartitionConfig", "the partition cannot take this request", true},
    Reason{"PartitionDown", "the partition is down", true},
    Reason{"PartitionInactive", "the partition is inactive", true},
    Reason{"BadConstraints", "no node has the features it asks for", true},
    Reason{"InvalidAccount", "the account is invalid", true},
    Reason{"InvalidQOS", "the QOS is invalid", true},
    Reason{"AccountNotAllowed", "the account may not use this partition", true},
    Reason{"QOSNotAllowed", "the QOS may not use this partition", true},
    Reason{"QOSMaxWallDurationPerJobLimit", "its time limit is above the QOS's maximum", true},
    Reason{"AssocMaxWallDurationPerJobLimit", "its time limit is above your account's maximum", true},
    Reason{"QOSMaxGRESPerJob", "it asks for more GPUs than the QOS allows a job", true},
    Reason{"QOSMaxCpuPerJobLimit", "it asks for more CPUs than the QOS allows a job", true},
    Reason{"QOSMaxMemoryPerJob", "it asks for more memory than the QOS allows a job", true},
    Reason{"QOSMaxNodePerJobLimit", "it asks for more nodes than the QOS allows a job", true},
    Reason{"AssocMaxNodesPerJobLimit", "it asks for more nodes than your account allows a job", true},
    Reason{"AssocMaxCpuPerJobLimit", "it asks for more CPUs than your account allows a job", true},
    Reason{"AssocMaxGRESPerJob", "it asks for more GPUs than your account allows a job", true},
    Reason{"QOSMinGRES", "it asks for fewer GPUs than the QOS requires", true},
    Reason{"MaxRequeued", "it was requeued too many times", true},
};

const Reason* find(std::string_view reason)
{
  for (const auto& r : k_reasons) {
    if (r.slurm == reason) {
      return &r;
    }
  }
  return nullptr;
}

} // namespace

std::string plain_reason(std::string_view reason)
{
  if (reason.empty() || reason == "None") {
    return "waiting to be scheduled";
  }
  const auto* r = find(reason);
  return std::string(r ? r->plain : reason);
}

bool is_hopeless_reason(std::string_view reason)
{
  const auto* r = find(reason);
  return r && r->hopeless;
}

} // namespace rv::slurm
