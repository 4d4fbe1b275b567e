#pragma once
// Per-job snapshots: an immutable hard-link copy of the workspace that the job runs from, and
// pruning by creation time that never removes the snapshot of a queued or running job.

#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace rv::sync {

// The user's jobs still in squeue, from `squeue -h -o '%k|%Z'` lines (comment `rv:<id>`, then the
// job's working directory): the request ids they belong to, and the snapshots under
// `snapshots_dir` they run in. A hardware retry is a new request running in the first request's
// snapshot, so the directory, not only the id, keeps a snapshot alive.
struct LiveJobs {
  std::set<std::string> request_ids;
  std::set<std::string> snapshots; // snapshot names
};
LiveJobs live_jobs(std::string_view squeue_text, const std::string& snapshots_dir);

// Request ids of the user's jobs still in squeue (live_jobs(...).request_ids).
std::set<std::string> live_request_ids(std::string_view squeue_text);

// The snapshot names (see snapshot_name) to delete: created more than `keep_s` ago, not
// belonging to a live request and not a live job's directory. Names that are not snapshots are
// never touched. Pure.
std::vector<std::string> snapshots_to_prune(const std::vector<std::string>& names, std::int64_t now_s,
                                            std::int64_t keep_s, const std::set<std::string>& live,
                                            const std::set<std::string>& live_snapshots = {});

// Creates <snapshots>/<name> as a hard-link copy of `workspace` (`cp -al`, else rsync
// --link-dest), atomically (a temporary name, then rename). One round trip.
Result<std::string> make_snapshot(proc::Runner& remote, const std::string& workspace, const std::string& snapshots,
                                  const std::string& name);
// Where make_snapshot puts snapshot `name`: <snapshots>/<name>.
std::string snapshot_path(const std::string& snapshots, const std::string& name);
// make_snapshot's command, for a batch of the caller's (`rv run`'s submission: first, before the
// preparation that lets an sbatch run), and its outcome read: the snapshot's path, or why it failed.
proc::Command snapshot_command(const std::string& workspace, const std::string& snapshots, const std::string& name);
Result<std::string> snapshot_made(const proc::Outcome& o, const std::string& where, const std::string& workspace,
                                  const std::string& snapshots, const std::string& name);

struct PruneReport {
  std::vector<std::string> removed;
  std::vector<std::string> kept_live; // old enough, but their job is queued or running
  bool skipped = false;               // squeue could not be asked: nothing removed
};

// The prune's listing: the snapshots' names, then the user's jobs in squeue. Reads only: one round
// trip, alone or in a batch of the caller's (`rv run`: the plan's discovery batch).
std::vector<proc::Command> prune_listing(const std::string& snapshots);
// The prune from its listing's two outcomes: what goes (removed on `remote` in one more round
// trip) and what is kept because its job lives; nothing goes when either could not be read.
Result<PruneReport> prune_listed(proc::Runner& remote, const std::string& snapshots, std::int64_t now_s,
                                 std::int64_t keep_s, const proc::Outcome& listed, const proc::Outcome& queued);

// Prunes old snapshots of one snapshots directory: one round trip to list them and read
// squeue, one more when something goes.
Result<PruneReport> prune_snapshots(proc::Runner& remote, const std::string& snapshots, std::int64_t now_s,
                                    std::int64_t keep_s);

struct PrunedSnapshot {
  PruneReport pruned;
  std::string path; // <snapshots>/<name>
};

// prune_snapshots and make_snapshot in one round trip (the listing, squeue and the snapshot in
// one batch; the prune's removal, when something goes, in one more). The new snapshot is never
// pruned: it is younger than any keep time (keep_s >= 0).
Result<PrunedSnapshot> prune_and_snapshot(proc::Runner& remote, const std::string& workspace,
                                          const std::string& snapshots, const std::string& name, std::int64_t now_s,
                                          std::int64_t keep_s);

} // namespace rv::sync
