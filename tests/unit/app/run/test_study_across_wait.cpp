// The background rv of a study across clusters waits on a worker's marks (app/run/study_across.hpp,
// marks_wait_cluster) where one wait can see what matters: the one cluster whose workers live,
// while tasks wait for them.

#include "app/run/study_across.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;

namespace {

StudyView cluster(int pending_workers, int running_workers, bool marks_read = true)
{
  StudyView v;
  v.workers_pending = pending_workers;
  v.workers_running = running_workers;
  v.marks.read = marks_read;
  return v;
}

AcrossStudyView across_view(std::vector<StudyView> per, int tasks_waiting)
{
  AcrossStudyView v;
  v.per = std::move(per);
  v.merged.counts.pending = tasks_waiting;
  return v;
}

} // namespace

TEST_CASE("study across: the background rv waits on the marks of the one cluster whose workers live")
{
  // Workers on cluster 1 only (the pool chose it), tasks waiting: wait there.
  CHECK(marks_wait_cluster(across_view({cluster(0, 0), cluster(2, 1)}, 3)) == std::optional<std::size_t>{1});
  CHECK(marks_wait_cluster(across_view({cluster(1, 0), cluster(0, 0)}, 1)) == std::optional<std::size_t>{0});
  // Workers on both: a wait on one would miss the other's marks: sleep the poll instead.
  CHECK_FALSE(marks_wait_cluster(across_view({cluster(1, 0), cluster(0, 1)}, 3)));
  // No task waits (every one on a worker): nothing to offer when a worker starts.
  CHECK_FALSE(marks_wait_cluster(across_view({cluster(0, 2), cluster(0, 0)}, 0)));
  // No worker alive anywhere: no mark will come.
  CHECK_FALSE(marks_wait_cluster(across_view({cluster(0, 0), cluster(0, 0)}, 2)));
  // The marks could not be read there: nothing to compare a wait's answer with.
  CHECK_FALSE(marks_wait_cluster(across_view({cluster(2, 0, false), cluster(0, 0)}, 2)));
}
