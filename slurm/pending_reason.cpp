#include "slurm/pending_reason.hpp"

#include "slurm/text.hpp"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <utility>

namespace rv::slurm {
namespace {

using K = ReasonKind;

struct Reason {
  std::string_view slurm; // as squeue %r and scontrol Reason= print it
  std::string_view plain;
  std::string_view hint;
  K kind;
  bool hopeless; // no amount of waiting clears it: the race gives the sibling up
};

constexpr std::string_view k_smaller = "ask for less (rv why shows alternatives that start sooner)";
constexpr std::string_view k_shorter = "ask for a shorter --time, or --checkpoint if the program can resume";

// Slurm 22.05's reasons other than the limit family (src/common/slurm_protocol_defs.c,
// job_reason_string), plus the ended reasons sacct keeps.
constexpr std::array k_reasons = {
    Reason{"Resources", "waiting for free GPUs",
           "it is next in line; rv why shows when running jobs end and what would start sooner", K::scheduling, false},
    Reason{"Priority", "other jobs are ahead in the queue",
           "higher-priority jobs go first; a shorter --time lets backfill start it in a gap", K::scheduling, false},
    Reason{"SchedDefer", "the scheduler defers new jobs to its next cycle", "", K::scheduling, false},
    Reason{"Dependency", "waiting for the job it depends on", "it starts once that job has ended as required",
           K::dependency, false},
    Reason{"DependencyNeverSatisfied", "its dependency can never be satisfied",
           "the job it depends on ended the wrong way: cancel it (rv stop) and submit again", K::dependency, true},
    Reason{"BeginTime", "not allowed to start before its begin time", "it becomes eligible at its begin time",
           K::begin_time, false},
    Reason{"JobHeldUser", "held by you (scontrol release releases it)", "scontrol release JOBID", K::held, false},
    Reason{"JobHeldAdmin", "held by an administrator", "ask the cluster's administrators to release it", K::held,
           false},
    Reason{"launch failed requeued held", "its launch failed; held by Slurm",
           "a node failed to start it: scontrol release JOBID retries, --exclude avoids the node", K::held, false},
    Reason{"JobHoldMaxRequeue", "it was requeued too many times and is held", "cancel it and submit again", K::held,
           true},
    Reason{"ReqNodeNotAvail", "the nodes it can use are down, drained or reserved",
           "--exclude the unavailable nodes or choose another GPU type", K::nodes, false},
    Reason{"NodeDown", "a node it needs is down", "--exclude the node or choose another GPU type", K::nodes, false},
    Reason{"FrontEndDown", "no front-end node is available", "ask the cluster's administrators", K::nodes, false},
    Reason{"Reservation", "waiting for its reservation to start", "", K::nodes, false},
    Reason{"ReservationDeleted", "its reservation was deleted", "submit again without --reservation", K::request, true},
    Reason{"ReservationInvalid", "its reservation is invalid", "submit again without --reservation", K::request, true},
    Reason{"PowerNotAvail", "not enough power is available", "", K::nodes, false},
    Reason{"PowerReserved", "the power it needs is reserved", "", K::nodes, false},
    Reason{"Licenses", "waiting for licenses", "", K::group, false},
    Reason{"BurstBufferResources", "waiting for burst-buffer space", "", K::group, false},
    Reason{"BurstBufferStageIn", "its burst buffer is being staged in", "", K::system, false},
    Reason{"BurstBufferOperation", "a burst-buffer operation failed", "cancel it and submit again", K::request, true},
    Reason{"JobArrayTaskLimit", "its array already runs its maximum number of tasks", "", K::your_jobs, false},
    Reason{"FedJobLock", "waiting for the federation to release the job", "", K::system, false},
    Reason{"Cleaning", "its node is cleaning up after a job", "", K::system, false},
    Reason{"Prolog", "its node is running the prolog", "", K::system, false},
    Reason{"AccountingPolicy", "an accounting policy holds it", "scontrol show job JOBID names the limit", K::group,
           false},
    Reason{"AssociationJobLimit", "your account runs its maximum number of jobs", "", K::your_jobs, false},
    Reason{"AssociationResourceLimit", "your account has reached a resource limit", "", K::group, false},
    Reason{"AssociationTimeLimit", "your account has reached its time limit", "", K::budget, false},
    Reason{"QOSJobLimit", "the QOS runs its maximum number of jobs", "", K::group, false},
    Reason{"QOSResourceLimit", "the QOS has reached a resource limit", "", K::group, false},
    Reason{"QOSTimeLimit", "the QOS has reached its time limit", "", K::budget, false},
    Reason{"QOSUsageThreshold", "the QOS's usage is above its threshold", "", K::budget, false},
    Reason{"PartitionTimeLimit", "its time limit is above the partition's MaxTime", k_shorter, K::request, true},
    Reason{"PartitionNodeLimit", "it asks for more nodes than the partition allows",
           "ask for fewer nodes (--single-node), or the nodes may be down", K::request, true},
    Reason{"PartitionConfig", "the partition cannot take this request", k_smaller, K::request, true},
    Reason{"PartitionDown", "the partition is down", "choose another GPU type", K::request, true},
    Reason{"PartitionInactive", "the partition is inactive", "choose another GPU type", K::request, true},
    Reason{"MaxMemPerLimit", "it asks for more memory per CPU or node than the partition allows", "ask for less --mem",
           K::request, true},
    Reason{"BadConstraints", "no node has the features it asks for", "choose another GPU type", K::request, true},
    Reason{"Constraints", "no node has the features it asks for", "choose another GPU type", K::request, true},
    Reason{"InvalidAccount", "the account is invalid", "check the account (sacctmgr show assoc user=$USER)", K::request,
           true},
    Reason{"InvalidQOS", "the QOS is invalid", "check --qos (sacctmgr show assoc user=$USER)", K::request, true},
    Reason{"AccountNotAllowed", "the account may not use this partition", "choose another GPU type or account",
           K::request, true},
    Reason{"QOSNotAllowed", "the QOS may not use this partition", "choose another GPU type or --qos", K::request, true},
    Reason{"InactiveLimit", "it reached the cluster's InactiveLimit", "", K::ended, false},
    Reason{"NonZeroExitCode", "the program exited with a non-zero code", "rv logs ID shows its output", K::ended,
           false},
    Reason{"RaisedSignal", "the program was killed by a signal", "rv logs ID --err shows its errors", K::ended, false},
    Reason{"TimeLimit", "it ran into its time limit", k_shorter, K::ended, false},
    Reason{"OutOfMemory", "it ran out of memory", "ask for more --mem", K::ended, false},
    Reason{"DeadLine", "it missed its deadline", "", K::ended, false},
    Reason{"JobLaunchFailure", "the job could not be launched on its node", "--exclude the node and submit again",
           K::system, false},
    Reason{"SystemFailure", "a failure of the Slurm system", "", K::system, false},
};

// --- The limit family: (QOS|Assoc)(Grp|Max|Min)<resource><scope>[Limit], and Max<resource>PerAccount.

struct Resource {
  std::string_view token; // as in the reason, longest first where one is a prefix of another
  std::string_view noun;  // "GPUs"
  std::string_view adj;   // "GPU" (before "limit", "-minutes")
};

constexpr std::array k_resources = {
    Resource{"GRES", "GPUs", "GPU"},
    Resource{"Cpu", "CPUs", "CPU"},
    Resource{"CPU", "CPUs", "CPU"},
    Resource{"Memory", "memory", "memory"},
    Resource{"Mem", "memory", "memory"},
    Resource{"Nodes", "nodes", "node"},
    Resource{"Node", "nodes", "node"},
    Resource{"Billing", "billing units", "billing"},
    Resource{"SubmitJobs", "queued jobs", "queued-job"},
    Resource{"SubmitJob", "queued jobs", "queued-job"},
    Resource{"Jobs", "running jobs", "job"},
    Resource{"Job", "running jobs", "job"},
    Resource{"WallDuration", "wall time", "wall-time"},
    Resource{"Wall", "wall time", "wall-time"},
    Resource{"License", "licenses", "license"},
    Resource{"BB", "burst buffer", "burst-buffer"},
    Resource{"Energy", "energy", "energy"},
    Resource{"Unknown", "resources", "resource"},
};

bool eat(std::string_view& s, std::string_view prefix)
{
  if (!s.starts_with(prefix)) {
    return false;
  }
  s.remove_prefix(prefix.size());
  return true;
}

std::optional<ReasonInfo> limit_reason(std::string_view code)
{
  std::string_view s = code;
  enum { qos, assoc, per_account } owner;
  if (eat(s, "QOS")) {
    owner = qos;
  } else if (eat(s, "Assoc")) {
    owner = assoc;
  } else if (s.starts_with("Max") && s.ends_with("PerAccount")) {
    owner = per_account;
  } else {
    return std::nullopt;
  }
  enum { grp, max, min } level;
  if (eat(s, "Grp")) {
    level = grp;
  } else if (eat(s, "Max")) {
    level = max;
  } else if (eat(s, "Min")) {
    level = min;
  } else {
    return std::nullopt;
  }
  const Resource* res = nullptr;
  for (const auto& r : k_resources) {
    if (eat(s, r.token)) {
      res = &r;
      break;
    }
  }
  if (res == nullptr) {
    return std::nullopt;
  }
  if (s.ends_with("Limit")) {
    s.remove_suffix(5);
  }
  eat(s, "NotSatisfied");
  const bool run_minutes = eat(s, "RunMinutes");
  const bool minutes = !run_minutes && eat(s, "Minutes");
  std::string_view scope = s; // "", PerJob, PerNode, PerUser, PerAccount
  if (scope != "" && scope != "PerJob" && scope != "PerNode" && scope != "PerUser" && scope != "PerAccount") {
    return std::nullopt;
  }
  const std::string whose = owner == assoc ? "your account's" : "the QOS's";
  const std::string who = owner == assoc ? "your account" : "the QOS";
  const std::string amount = minutes || run_minutes ? fmt::format("{}-minutes", res->adj) : std::string(res->noun);
  const bool wall = res->token.starts_with("Wall");
  ReasonInfo r;
  r.code = code;
  r.known = true;
  if (level == min) {
    r = {r.code,
         "",
         fmt::format("it asks for fewer {} than {} requires", amount, who),
         "ask for more, or use another QOS",
         K::request,
         true,
         true};
  } else if (level == max && (scope == "PerJob" || scope == "PerNode")) {
    r.kind = K::request;
    r.hopeless = true;
    r.plain = wall ? fmt::format("its time limit is above {} maximum", whose)
                   : fmt::format("it asks for more {} than {} allows per {}", amount, who,
                                 scope == "PerNode" ? "node" : "job");
    r.hint = wall ? k_shorter : k_smaller;
  } else if (owner == per_account || scope == "PerAccount") {
    r.kind = K::group;
    r.plain =
        fmt::format("your account already uses the QOS's {} limit per account: waits for its other jobs", res->adj);
    r.hint = "it starts when jobs of your account end";
  } else if (level == max) { // PerUser, or an association's own Max (one user's association)
    r.kind = K::your_jobs;
    r.plain = res->token.starts_with("Job") ? fmt::format("you already run the most jobs {} allows", who)
              : res->token.starts_with("Submit")
                  ? fmt::format("you already have the most queued jobs {} allows", who)
                  : fmt::format("you already use {} {} limit: waits for your other jobs", whose, res->adj);
    r.hint = "it starts when your other jobs end (rv ps lists them; rv stop frees them)";
  } else if (minutes || wall) {
    r.kind = K::budget;
    r.plain = fmt::format("{} has used up its {} budget", who, wall ? "wall-time" : amount);
    r.hint = "usage decays over time or an administrator raises the limit; another account or QOS may have budget";
  } else if (run_minutes) {
    r.kind = K::group;
    r.plain = fmt::format("the running jobs of {} hold all its {}: waits for them to progress", who, amount);
    r.hint = "a shorter --time needs fewer minutes and may start sooner";
  } else {
    r.kind = K::group;
    r.plain = res->token.starts_with("Job")      ? fmt::format("{} runs its maximum number of jobs", who)
              : res->token.starts_with("Submit") ? fmt::format("{} has its maximum number of queued jobs", who)
                                                 : fmt::format("{} {} are all in use", whose, res->noun);
    r.hint = "it waits for jobs that share the limit to end; another account or QOS may start sooner";
  }
  return r;
}

const Reason* find(std::string_view reason, bool any_case)
{
  for (const auto& r : k_reasons) {
    if (r.slurm == reason || (any_case && text::lower(r.slurm) == text::lower(reason))) {
      return &r;
    }
  }
  return nullptr;
}

std::optional<ReasonInfo> lookup(std::string_view code)
{
  for (bool any_case : {false, true}) {
    if (const auto* r = find(code, any_case)) {
      return ReasonInfo{std::string(code), "", std::string(r->plain), std::string(r->hint), r->kind, r->hopeless, true};
    }
  }
  return limit_reason(code);
}

} // namespace

std::string_view to_string(ReasonKind kind)
{
  constexpr std::array<std::string_view, 12> names = {"scheduling", "held",   "dependency", "begin_time",
                                                      "your_jobs",  "group",  "budget",     "nodes",
                                                      "request",    "system", "ended",      "unknown"};
  return names.at(static_cast<std::size_t>(kind));
}

ReasonInfo explain_reason(std::string_view reason)
{
  reason = text::trim(reason);
  if (reason.size() >= 2 && reason.front() == '(' && reason.back() == ')') {
    reason = text::trim(reason.substr(1, reason.size() - 2));
  }
  if (reason.empty() || reason == "None") {
    return {"None", "", "waiting to be scheduled", "", K::scheduling, false, true};
  }
  if (auto r = lookup(reason)) {
    return *r;
  }
  // "ReqNodeNotAvail, UnavailableNodes:a100-1": the word, then Slurm's detail.
  const auto cut = reason.find_first_of(", :");
  if (cut != std::string_view::npos) {
    if (auto r = lookup(reason.substr(0, cut))) {
      r->detail = text::trim(reason.substr(cut).substr(reason[cut] == ',' ? 1 : 0));
      return *r;
    }
  }
  // Slurm before 15.08 spelled ReqNodeNotAvail out.
  if (reason.find("DOWN, DRAINED or reserved") != std::string_view::npos) {
    auto r = *lookup("ReqNodeNotAvail");
    r.detail = reason;
    return r;
  }
  return {std::string(reason), "", std::string(reason), "", K::unknown, false, false};
}

std::string plain_reason(std::string_view reason)
{
  return explain_reason(reason).plain;
}

bool is_hopeless_reason(std::string_view reason)
{
  return explain_reason(reason).hopeless;
}

} // namespace rv::slurm
