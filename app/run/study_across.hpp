#pragma once
// A study across clusters (`rv run --array/--sweep --host A --host B`; docs/studies.md, "Across
// clusters"). Each cluster has a member request of its own (its record, its workers, its task
// directory); the first member is the coordinator. The clusters share no file system, so a task
// is never claimed by a rename across them: rv offers it on one cluster at a time
// (`tasks/<t>/offer`, app/run/plan/study_offers.hpp), recording the offer in the coordinator's
// record before it makes or takes back one. A worker takes an offer by one rename, rv takes one
// back by a rename of the same offer: one of them wins, so a task runs exactly once.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/run/plan/study.hpp"
#include "app/run/study_run.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// Whether `rec` is a member of a study across clusters.
bool is_study_across(const RequestRecord& rec);
// The coordinator's request id (the first member's); "" for a study on one cluster.
std::string study_coordinator(const RequestRecord& rec);

// `rv run --array/--sweep` with several --host: plans every cluster, spreads the pool of workers
// over them within each cluster's limits, submits each cluster's member, then follows (-f) or
// leaves a background rv (`rv _settle`) to coordinate the offers and top the pools up.
Result<int> run_study_across(Env& env, const StudyOrder& order, study::Study st, const std::string& line, bool follow);

// `rv _settle REQ` for a study across clusters (any member): coordinates until every task ended.
Result<int> settle_study_across(Env& env, const RequestRecord& member);

// A study across clusters as the clusters together say (one listing per cluster).
struct AcrossStudyView {
  StudyView merged;                              // every task's latest attempt; workers summed
  std::vector<std::string> hosts;                // per member: the host it runs on
  std::vector<RequestRecord> records;            // per member, refreshed
  std::vector<StudyView> per;                    // per member: its own view
  std::vector<std::optional<std::size_t>> where; // per task: the member holding its latest attempt
};
Result<AcrossStudyView> read_study_across(Env& env, const RequestRecord& member);

// Where the background rv of a study across clusters may wait for a worker's start or end mark
// instead of sleeping its poll (as on one cluster): the one cluster whose workers are alive, while
// tasks wait and its marks could be read. None when workers live on several clusters (a wait on
// one would miss the others' marks) or on none.
std::optional<std::size_t> marks_wait_cluster(const AcrossStudyView& v);

// `rv ps REQ`: one line per task with its cluster (host), and one per worker.
std::vector<std::string> study_across_lines(const AcrossStudyView& v);

// `rv logs REQ/7` of a study across clusters: the task's log on the cluster of its latest attempt.
Result<int> show_task_log_across(Env& env, const RequestRecord& member, int task, bool follow, int tail);

// `rv stop` of a study across clusters: under the coordinator's lock (no offer or top-up in
// between), the study is recorded stopped and every member's workers are cancelled on its cluster.
// One "id: job ..." per member with the jobs cancelled.
Result<std::vector<std::pair<std::string, std::vector<std::string>>>> stop_study_across(Env& env,
                                                                                        const RequestRecord& member);

} // namespace rv::app
