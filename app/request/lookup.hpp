#pragma once
// Which stored requests there are, and where they may be acted on: the records read from the
// store, the active ones refreshed from Slurm (and reaped), and the one rule that a request is
// acted on only on the host it was submitted on. Every command that names requests uses these.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/request/watchdog_samples.hpp"

#include <map>
#include <string>
#include <vector>

namespace rv::app {

// Whether `r` belongs to the host rv is connected to (`here`, as current_host names it); a record
// with no host predates the field and belongs everywhere.
bool same_host(const RequestRecord& r, const std::string& here);

// Where rv is connected now, as records name it (connecting first: an SSH runner names its
// resolved user@host:port only once connected).
std::string current_host(Env& env);

// A request is acted on only where it was submitted: the same job id on another cluster is
// someone else's job. Fails naming both hosts otherwise.
Result<void> require_same_host(const RequestRecord& r, const std::string& here);

// Every readable record of the store, oldest first; unreadable ones are reported by name
// (logged) and skipped.
Result<std::vector<RequestRecord>> load_requests(const store::RecordStore& store);

// The active requests (every one with `all`), refreshed from Slurm and reaped; each reaper note
// is logged. A race across clusters is not settled here: callers that list settle first
// (settle_open_races, app/run/launch/cluster_race.hpp), as `rv ps` and `rv gpu` do. With `activity`, the watchdog's verdict on each running request (by id) comes in the
// same round trip (app/request/watchdog_samples.hpp).
Result<std::vector<RequestRecord>> list_requests(Env& env, bool all,
                                                 std::map<std::string, Activity>* activity = nullptr);

// The request KEY names, by the one rule every command uses (docs/requests.md, "Naming a
// request"), first level that matches wins: (1) a whole request id; (2) a race id: the member
// chosen (a race not yet won is an error that lists its members); (3) the Slurm job id of one of
// its jobs (job ids repeat across clusters: one that requests on several clusters carry is an
// error that lists them); (4) its name (rv-<id> or --name): the newest of the requests that carry
// it; (5) a request id prefix that only one request has. A prefix of several is an error that
// lists them.
Result<RequestRecord> find_request(const store::RecordStore& store, const std::string& key);

// What a command means when no KEY is given: this host's requests, newest first (`rv logs`), the
// still-submitted ones first (`rv why`), or only the unfinished ones (`rv ssh`, `forward`, `gpu`,
// which take the newest one running).
enum class Unnamed { newest, newest_submitted, unfinished };

// The requests a command acts on: with a KEY, the one find_request names, which must be on the
// host rv is connected to (require_same_host); without, this host's requests as `unnamed` says,
// the best first (empty when there is none anywhere: the command says what to do; when there are
// only other hosts', require_same_host's error about the newest of them).
Result<std::vector<RequestRecord>> requests_for_key(Env& env, const std::string& key, Unnamed unnamed);

} // namespace rv::app
