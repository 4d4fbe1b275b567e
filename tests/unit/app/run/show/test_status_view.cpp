// The live status renderer: pure (state and time in, lines out), tested without a terminal.

#include "app/run/show/status_view.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;

namespace {

JobRecord pending(const std::string& sid, const std::string& id, const std::string& reason,
                  const std::string& estimate = {})
{
  JobRecord j;
  j.strategy_id = sid;
  j.job_id = id;
  j.label = "1x a100 on gpu-a100";
  j.state = slurm::JobState::pending;
  j.reason = reason;
  j.start_estimate = estimate;
  return j;
}

bool has_escape(const std::string& s)
{
  return s.find('\x1b') != std::string::npos;
}

} // namespace

TEST_CASE("status view: a pending job's line says why in plain words, Slurm's word and the estimate")
{
  auto j = pending("s1", "301", "Resources", "2026-11-22T14:05:00");
  CHECK(job_state_text(j) == "PENDING: waiting for free GPUs (Resources), est. start 2026-11-22T14:05:00");
  CHECK(job_status_line(j, 12) ==
        "rv: s1 (job 301): PENDING: waiting for free GPUs (Resources), est. start 2026-11-22T14:05:00 [0:12]\n");
  j.reason.clear();
  j.start_estimate.clear();
  CHECK(job_state_text(j) == "PENDING: waiting to be scheduled");
  j.state = slurm::JobState::running;
  j.node_list = "a6000-1";
  CHECK(job_state_text(j) == "RUNNING on a6000-1");
  j.state = slurm::JobState::cancelled;
  CHECK(job_state_text(j) == "CANCELLED");
  // A reason from the cluster cannot drive the terminal.
  auto evil = pending("s1", "301", "Bad\x1b]0;pwned\x07");
  CHECK_FALSE(has_escape(job_state_text(evil)));
}

TEST_CASE("status view: the terminal block: a title with the elapsed time, one line per submitted sibling")
{
  StatusView v;
  v.title = "request 3f9c02ab: waiting for the first of 2 strategies to start";
  v.since_epoch = 1000;
  v.jobs = {pending("s1", "301", "Resources"), pending("s2", "302", "Priority")};
  JobRecord refused;
  refused.strategy_id = "s3";
  refused.error = "Invalid account";
  v.jobs.push_back(refused); // no job id: not in the block
  auto lines = status_block(v, 1025, false, 0);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "rv: request 3f9c02ab: waiting for the first of 2 strategies to start 0:25");
  CHECK(lines[1] == "  s1   301      PENDING: waiting for free GPUs (Resources)  [1x a100 on gpu-a100]");
  CHECK(lines[2] == "  s2   302      PENDING: other jobs are ahead in the queue (Priority)  [1x a100 on gpu-a100]");
  for (const auto& l : lines) {
    CHECK_FALSE(has_escape(l)); // NO_COLOR: not one escape in the lines themselves
  }
  // Time is an argument: an hour later the counter says so.
  CHECK(status_block(v, 1000 + 3725, false, 0)[0].ends_with(" 1:02:05"));
}

TEST_CASE("status view: colours only with color, lines cut to the window so that none wraps")
{
  StatusView v;
  v.title = "waiting";
  v.since_epoch = 1000;
  v.jobs = {pending("s1", "301", "Resources")};
  auto coloured = status_block(v, 1005, true, 0);
  CHECK(coloured[1].find("\x1b[33mPENDING\x1b[0m") != std::string::npos);
  auto narrow = status_block(v, 1005, false, 20);
  CHECK(narrow[1] == "  s1   301      PEN"); // 19 columns: the last one stays free
  auto narrow_coloured = status_block(v, 1005, true, 20);
  CHECK(narrow_coloured[1].ends_with("\x1b[0m")); // a cut never leaves a colour on
}

TEST_CASE("status view: redraw and erase move up over exactly the rows drawn")
{
  CHECK(erase_block(0).empty());
  CHECK(erase_block(3) == "\r\x1b[3A\x1b[J");
  CHECK(redraw_block(0, {"a", "b"}) == "\x1b[?7la\x1b[K\nb\x1b[K\n\x1b[?7h");
  CHECK(redraw_block(2, {"c"}) == "\r\x1b[2A\x1b[J\x1b[?7lc\x1b[K\n\x1b[?7h");
  CHECK(redraw_block(2, {}) == erase_block(2));
}

TEST_CASE("status view: events carry the reason in both words, elapsed counters")
{
  auto e = state_event("3f9c02ab", pending("s1", "301", "Resources", "2026-11-22T14:05:00"), 7);
  CHECK(e["event"] == "state");
  CHECK(e["job_id"] == "301");
  CHECK(e["reason"] == "Resources");
  CHECK(e["reason_text"] == "waiting for free GPUs");
  CHECK(e["start_estimate"] == "2026-11-22T14:05:00");
  CHECK(e["elapsed_s"] == 7);
  CHECK(elapsed_text(0) == "0:00");
  CHECK(elapsed_text(754) == "12:34");
  CHECK(elapsed_text(3600) == "1:00:00");
  CHECK(submitting_text(1, "h") == "submitting 1 strategy to h");
  CHECK(submitting_text(4, "h") == "submitting 4 strategies to h");
}
