#pragma once
// One request raced across clusters (docs/multi-cluster.md): each cluster has a member request of
// its own (its record, its jobs, its in-job claim); the members share a race group. A job that
// wins its cluster's claim waits at the gate until rv chooses a cluster: `go` in the chosen
// member's request directory, `stop` (and scancel) in every other. The choice is written to every
// member's record before any `go`, under the group's lock, so that every rv that settles the group
// (the foreground race, the background settler, `rv ps`) applies the one choice, never a second.

#include "app/env.hpp"
#include "app/login_backoff.hpp"
#include "app/request/requests.hpp"
#include "slurm/race.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rv::app {

// One member of a race group: its record and the Env of its cluster.
struct RaceMember {
  RaceMember() = default;
  RaceMember(RequestRecord r, Env* e) : rec(std::move(r)), env(e) {}
  RequestRecord rec;
  Env* env = nullptr;
  // Failed logins to its cluster with no terminal (the background settler's; app/login_backoff.hpp):
  // it is not polled again before the wait is over.
  LoginBackoff logins;
};

// What one poll saw of a member's jobs; not `reached` when its cluster did not answer.
struct MemberPoll {
  bool reached = false;
  std::string error;         // why not reached
  bool login_failed = false; // not reached because the login failed (no terminal to answer it)
  std::map<std::string, slurm::JobView> views;
};

// The member to choose: the one with a started job (holding its allocation, so waiting at the
// gate or past it) that started first; a tie goes to the member listed first (the better ranked).
// nullopt when no member has one. Pure.
std::optional<std::size_t> choose_member(const std::vector<MemberPoll>& polls);

// Whether every job of every member has ended (terminal, or refused at submission): the group is
// over. A member whose cluster did not answer is not over. Pure.
bool group_over(const std::vector<RaceMember>& members, const std::vector<MemberPoll>& polls);

// The race group of `rec` ("" when it has none) and its member request ids, in rank order.
std::string race_group(const RequestRecord& rec);
std::vector<std::string> race_member_ids(const RequestRecord& rec);

// Loads the members of `rec`'s group from the store and opens each one's cluster
// (env.clusters, by the record's destination). A member whose record is gone is left out.
Result<std::vector<RaceMember>> load_race_members(Env& env, const RequestRecord& rec);
// The same for the member requests `ids` of any group (a study across clusters, app/run/study_across.hpp);
// `what` names the group in the warning for a record that cannot be read.
Result<std::vector<RaceMember>> load_members(Env& env, const std::vector<std::string>& ids, const std::string& what);

// Ends member `rec` on its cluster (`member_env`): `stop` in its request directory (a claimer at
// the gate ends without running the command), then scancel of its live jobs, recorded as
// cancelled. Fails when scancel could not run (the jobs may still be queued).
Result<void> stop_member(Env& member_env, RequestRecord& rec);

// Settles the race group of member `request_id` with settle_members (the background rv of `rv run`
// without -f; `rv _settle`). 0 when chosen, 1 when none could be or the loop ended without a
// choice (an interrupt, or every login failed: the race is left to `rv ps`).
Result<int> settle_race(Env& env, const std::string& request_id);

// Where a command that names request `key` goes: the cluster of the request it
// names (its destination, "" = the configured one), and the request's id; for a race member that
// lost, the member chosen. nullopt when no record matches (the command then says so itself).
struct Route {
  std::string destination;
  std::string id;
};
std::optional<Route> route_request(const store::RecordStore& store, const std::string& key);

// What a settle step found.
struct SettleStep {
  std::optional<std::size_t> chosen;  // the member chosen (now or before)
  bool over = false;                  // no member can be chosen any more: every job has ended
  std::vector<std::string> unreached; // "host: why" for each cluster that did not answer
};

// One settle step, under the group's lock: reads the members' records again; polls every member's
// jobs (each cluster in parallel); when the group has no choice yet and a member has a started
// job, chooses it (choose_member) and records the choice in every member; then applies the choice
// (again: it is idempotent): `go` on the chosen member's cluster, `stop` and scancel on the others,
// whose records end cancelled. A group over with no choice ends every member failed.
Result<SettleStep> settle_step(Env& env, std::vector<RaceMember>& members);

// How the settle loop ended.
enum class SettleEnd {
  chosen,        // a member is chosen (now or before): `Settled::chosen` names it
  over,          // every job ended before any was chosen: every member has ended failed
  interrupted,   // a Ctrl-C (SIGINT, SIGTERM): nothing cancelled; the caller decides
  logins_failed, // every cluster's login failed with no terminal, one LoginBackoff::k_max times in a row
};
struct Settled {
  SettleEnd end = SettleEnd::over;
  std::size_t chosen = 0; // index into the members, when `end` is chosen
};

// The one settle loop, for the foreground race (`rv run -f`, `rv up`: launch_across) and the
// background settler (`rv _settle`: settle_race): settle steps, the settling backoff between them
// (slurm::Backoff::settling), until one of the ends above. A cluster that cannot be reached is
// named once and the race goes on with the others; a cluster whose login fails with no terminal
// (a second factor) is polled again after minutes (LoginBackoff).
Settled settle_members(Env& env, std::vector<RaceMember>& members);

// The settle step for every unsettled group in the store (what `rv ps` runs before it lists):
// logs what it chose; an unreachable cluster is logged and left for the next time.
void settle_open_races(Env& env);

} // namespace rv::app
