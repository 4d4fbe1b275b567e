#pragma once
// Slurm's pending reasons, in one home: what each means in plain words, what the user can do,
// what kind of wait it is, and whether waiting can ever clear it. The race (is_hopeless_reason),
// the live status, `rv ps` and `rv why` read this. It covers Slurm 22.05's reason list
// (job_state_reason_string): a table for the scheduling, hold, node and request reasons, and
// one grammar for the ~120 QOS/association limit names (QOSMaxGRESPerUser, AssocGrpGRESMinutes,
// MaxGRESPerAccount...), so a limit Slurm adds in the same pattern is explained too.

#include <string>
#include <string_view>

namespace rv::slurm {

// What can end a wait.
enum class ReasonKind {
  scheduling, // Resources, Priority, None: the queue itself; waiting ends it
  held,       // JobHeldUser/JobHeldAdmin: someone must release it
  dependency, // Dependency: another job must end first
  begin_time, // BeginTime: not before a set time
  your_jobs,  // a per-user limit your own running jobs use up (QOSMaxGRESPerUser)
  group,      // a limit shared with others (account or QOS group limit, per-account limit)
  budget,     // a minutes budget used up (AssocGrpGRESMinutes): usage must decay or be raised
  nodes,      // ReqNodeNotAvail, NodeDown, Reservation: the nodes it may use are unavailable
  request,    // the request itself breaks a limit or names something invalid: it never starts
  system,     // the cluster's own steps (Prolog, Cleaning, launch failure)
  ended,      // why a job ended (NonZeroExitCode, TimeLimit, ...), as sacct and scontrol keep it
  unknown,    // a reason this table does not know
};

// Names a kind as `rv why --json` prints it: "scheduling", "your_jobs", ...
std::string_view to_string(ReasonKind kind);

// A reason explained.
struct ReasonInfo {
  std::string code;   // Slurm's word ("ReqNodeNotAvail" of "ReqNodeNotAvail, UnavailableNodes:x")
  std::string detail; // what Slurm said after the word ("UnavailableNodes:x"), "" if nothing
  std::string plain;  // one line in plain words
  std::string hint;   // what the user can do about it; "" when there is nothing to do
  ReasonKind kind = ReasonKind::unknown;
  bool hopeless = false; // no amount of waiting clears it
  bool known = false;    // false: `plain` is Slurm's own text
};

// Explains a reason as squeue %r, scontrol Reason= or sacct Reason print it. "" and "None" are
// "waiting to be scheduled"; an unknown reason keeps Slurm's spelling as its plain text.
ReasonInfo explain_reason(std::string_view reason);

// The reason in plain words ("Resources" -> "waiting for free GPUs"); a reason the table does
// not know is returned as Slurm spells it; "" and "None" give "waiting to be scheduled".
std::string plain_reason(std::string_view reason);

// Tells whether a pending reason can never clear by waiting (a limit the job itself breaks,
// a bad account or constraint), as opposed to Resources, Priority or a per-user count limit.
bool is_hopeless_reason(std::string_view reason);

} // namespace rv::slurm
