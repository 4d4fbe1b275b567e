// A study's worker run for real (bash, fake Slurm commands; templates/study.cpp): each task once,
// however many workers, a dead worker's task claimed again within its attempts, no task started
// that the allocation cannot finish.

#include "app/run/pipeline.hpp"
#include "app/run/plan/study.hpp"
#include "app/run/plan/study_offers.hpp"
#include "cli/plan_options.hpp"
#include "core/process/shell.hpp"
#include "exec_fixture.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace rv::templates;
using namespace rv::templates::testing;

namespace {

// A study of `n` tasks whose commands append "<id> <RV_TASK_ID> <RV_SWEEP_X> <RV_TASK_COUNT>" to
// <dir>/ran.txt, then sleep `sleep_s` and exit with `status`.
RenderOptions study_options(const ExecFixture& fx, int n, const std::string& sleep_s = "0", int status = 0)
{
  auto o = fx.options("study-1");
  o.command = "echo {task}";
  o.study.task_time_s = 60;
  o.study.attempts = 2;
  o.study.variables = {"RV_SWEEP_X"};
  for (int i = 0; i < n; ++i) {
    o.study.tasks.push_back(
        {i,
         fmt::format(
             "echo {} \"$RV_TASK_ID\" \"$RV_SWEEP_X\" \"$RV_TASK_COUNT\" >>'{}'; echo out-{}; sleep {}; exit {}", i,
             fx.path("ran.txt"), i, sleep_s, status),
         {{"RV_SWEEP_X", fmt::format("x'{}", i)}}});
  }
  return o;
}

std::vector<std::string> lines_of(const std::string& text)
{
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string run_worker(const ExecFixture& fx, const std::string& script, const std::string& job,
                       const std::string& end = "2099-01-01T00:00:00", bool background = false)
{
  return fx.job_env(job, "FAKE_END_TIME=" + end) + "bash '" + script + "' >>'" + fx.path("worker-" + job + ".txt") +
         "' 2>&1" + (background ? " &" : "");
}

} // namespace

TEST_CASE("study exec: one worker runs every task once, with its id, count and sweep values")
{
  ExecFixture fx;
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx, 4)));
  CHECK(ExecFixture::sh(run_worker(fx, script, "301")) == 0);
  CHECK(lines_of(fx.read("ran.txt")) == std::vector<std::string>{"0 0 x'0 4", "1 1 x'1 4", "2 2 x'2 4", "3 3 x'3 4"});
  // Each task's output is its own log; the attempt records its job and its status.
  CHECK(fx.read("rv/requests/study-1/tasks/2/a1/out") == "out-2\n");
  CHECK(fx.read("rv/requests/study-1/tasks/2/a1/job") == "301\n");
  CHECK(fx.read("rv/requests/study-1/tasks/2/a1/exit").starts_with("0 "));
  // It marked its start and its end for rv's top-up.
  CHECK(ExecFixture::sh("test -e '" + fx.path("rv/requests/study-1/tasks/.started.301") + "'") == 0);
  CHECK(ExecFixture::sh("test -e '" + fx.path("rv/requests/study-1/tasks/.ended.301") + "'") == 0);
  // A second worker finds nothing to claim, runs nothing, and cancels the pending workers.
  CHECK(ExecFixture::sh(run_worker(fx, script, "302")) == 0);
  CHECK(lines_of(fx.read("ran.txt")).size() == 4);
  CHECK(fx.read("worker-302.txt").find("ran 0 task(s)") != std::string::npos);
  CHECK(fx.read("calls.log").find("squeue -h -u alice -t PENDING") != std::string::npos);
}

TEST_CASE("study exec: workers started together run each task exactly once")
{
  ExecFixture fx;
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx, 12, "0.05")));
  // squeue says every worker runs (they do): a task in flight is never taken for a dead worker's.
  rv::testing::write_text(fx.path("squeue.txt"), "RUNNING\n");
  std::string line;
  for (int w = 0; w < 4; ++w) {
    line += run_worker(fx, script, std::to_string(400 + w),
                       "2099-01-01T00:00:00 FAKE_SQUEUE_FILE='" + fx.path("squeue.txt") + "'", true) +
            " ";
  }
  CHECK(ExecFixture::sh(line + "wait") == 0);
  auto ran = lines_of(fx.read("ran.txt"));
  REQUIRE(ran.size() == 12);
  for (int i = 0; i < 12; ++i) {
    CHECK(std::count_if(ran.begin(), ran.end(),
                        [&](const std::string& l) { return l.starts_with(fmt::format("{} ", i)); }) == 1);
  }
}

TEST_CASE("study exec: a task whose worker died runs again, within its attempts")
{
  ExecFixture fx;
  auto opts = study_options(fx, 2);
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), opts));
  // Task 1 was claimed by job 999, which is gone (the fake squeue knows no job): a dead worker.
  CHECK(ExecFixture::sh("mkdir -p '" + fx.path("rv/requests/study-1/tasks/1/a1") + "' && echo 999 >'" +
                        fx.path("rv/requests/study-1/tasks/1/a1/job") + "'") == 0);
  CHECK(ExecFixture::sh(run_worker(fx, script, "501")) == 0);
  CHECK(lines_of(fx.read("ran.txt")) == std::vector<std::string>{"0 0 x'0 2", "1 1 x'1 2"});
  CHECK(fx.read("rv/requests/study-1/tasks/1/a1/exit").starts_with("lost "));
  CHECK(fx.read("rv/requests/study-1/tasks/1/a2/job") == "501\n");
  CHECK(fx.read("worker-501.txt").find("task 1: job 999 ended during attempt 1") != std::string::npos);

  // The owner wrote its exit after this worker read none and ended before the check (seen in
  // test_study: the task ran twice): the exit stands and the task is not run again.
  ExecFixture fx3;
  auto script3 = fx3.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx3, 1)));
  const auto a1 = fx3.path("rv/requests/study-1/tasks/0/a1");
  CHECK(ExecFixture::sh("mkdir -p '" + a1 + "' && echo 998 >'" + a1 + "/job'") == 0);
  CHECK(ExecFixture::sh(fx3.job_env("503", "FAKE_END_TIME=2099-01-01T00:00:00 FAKE_SQUEUE_HOOK=\"[ -e '" + a1 +
                                               "/exit' ] || echo '0 1795987311' >'" + a1 + "/exit'\"") +
                        "bash '" + script3 + "' >>'" + fx3.path("worker-503.txt") + "' 2>&1") == 0);
  CHECK(fx3.read("rv/requests/study-1/tasks/0/a1/exit") == "0 1795987311\n");
  CHECK(ExecFixture::sh("test -e '" + fx3.path("ran.txt") + "'") != 0);
  CHECK(ExecFixture::sh("test -e '" + fx3.path("rv/requests/study-1/tasks/0/a2") + "'") != 0);

  // Its attempts used up (--retries 0), a dead worker's task is over: not run again.
  ExecFixture fx2;
  auto once = study_options(fx2, 1);
  once.study.attempts = 1;
  auto script2 = fx2.write_script("worker", render_ok(base_strategy(), base_request(), once));
  CHECK(ExecFixture::sh("mkdir -p '" + fx2.path("rv/requests/study-1/tasks/0/a1") + "' && echo 999 >'" +
                        fx2.path("rv/requests/study-1/tasks/0/a1/job") + "'") == 0);
  CHECK(ExecFixture::sh(run_worker(fx2, script2, "502")) == 0);
  CHECK(ExecFixture::sh("test -e '" + fx2.path("ran.txt") + "'") != 0);
  CHECK(ExecFixture::sh("test -e '" + fx2.path("rv/requests/study-1/tasks/0/done") + "'") == 0);
}

TEST_CASE("study exec: a task in flight on a live worker is left to it")
{
  ExecFixture fx;
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx, 1)));
  CHECK(ExecFixture::sh("mkdir -p '" + fx.path("rv/requests/study-1/tasks/0/a1") + "' && echo 777 >'" +
                        fx.path("rv/requests/study-1/tasks/0/a1/job") + "' && echo RUNNING >'" + fx.path("squeue.txt") +
                        "'") == 0);
  // The fake squeue says RUNNING for any job: job 777 lives, so its task is not claimed again.
  std::string with_squeue =
      fx.job_env("602", "FAKE_END_TIME=2099-01-01T00:00:00 FAKE_SQUEUE_FILE='" + fx.path("squeue.txt") + "'") +
      "bash '" + script + "' >'" + fx.path("w602.txt") + "' 2>&1";
  CHECK(ExecFixture::sh(with_squeue) == 0);
  CHECK(fx.read("w602.txt").find("ran 0 task(s)") != std::string::npos);
  CHECK(ExecFixture::sh("test -e '" + fx.path("ran.txt") + "'") != 0);
}

TEST_CASE("study exec: a failed task is not retried unless --retry-failed")
{
  ExecFixture fx;
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx, 1, "0", 3)));
  CHECK(ExecFixture::sh(run_worker(fx, script, "701")) == 0);
  CHECK(lines_of(fx.read("ran.txt")).size() == 1);
  CHECK(fx.read("rv/requests/study-1/tasks/0/a1/exit").starts_with("3 "));

  ExecFixture fx2;
  auto opts = study_options(fx2, 1, "0", 3);
  opts.study.retry_failed = true;
  auto script2 = fx2.write_script("worker", render_ok(base_strategy(), base_request(), opts));
  CHECK(ExecFixture::sh(run_worker(fx2, script2, "702")) == 0);
  CHECK(lines_of(fx2.read("ran.txt")).size() == 2); // attempts: 2
}

TEST_CASE("study exec: no task starts that the allocation cannot finish")
{
  ExecFixture fx;
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx, 3)));
  // The allocation ends now: its first task (it was sized for one) runs, no later one.
  CHECK(ExecFixture::sh(run_worker(fx, script, "801", "2001-01-01T00:00:00")) == 0);
  CHECK(lines_of(fx.read("ran.txt")).size() == 1);
  CHECK(fx.read("worker-801.txt").find("no more tasks here") != std::string::npos);
  CHECK(fx.read("worker-801.txt").find("ran 1 task(s)") != std::string::npos);
}

TEST_CASE("study exec: a worker of one minute runs several tasks of --time 10s (the claim check keeps the seconds)")
{
  // `--time 10s`: the walltime is a whole minute, a task's time stays 10 s (cli/plan_options.hpp),
  // as the request's study carries it into the worker (app/run/launch/submit.cpp).
  rv::cli::PlanFlags flags;
  flags.time = "10s";
  rv::app::JobOrder order;
  order.request = *rv::cli::to_request(flags);
  order.task_time_s = *rv::cli::time_asked_s(flags);
  rv::app::study::StudyFlags f;
  f.array = "0-2";
  const auto st = rv::app::study::make_study(f, "x", order.study_task_time_s());
  REQUIRE(st);
  ExecFixture fx;
  auto opts = study_options(fx, 3);
  opts.study.task_time_s = st->task_time_s;
  const auto text = render_ok(base_strategy(), base_request(), opts);
  CHECK(text.find("\nRV_TASK_TIME_S=10\n") != std::string::npos);
  auto script = fx.write_script("worker", text);
  // A minute's allocation 10 s in: 50 s left, room for several tasks of 10 s, none of 60 s.
  const std::string in_a_minute = "\"$(date -d @$(( $(date +%s) + 50 )) +%Y-%m-%dT%H:%M:%S)\"";
  CHECK(ExecFixture::sh(run_worker(fx, script, "811", in_a_minute)) == 0);
  CHECK(lines_of(fx.read("ran.txt")).size() == 3);
  CHECK(fx.read("worker-811.txt").find("ran 3 task(s)") != std::string::npos);

  // The minute as a task's time (what the rounding gave before): the same worker runs one.
  ExecFixture fx2;
  auto minute = study_options(fx2, 3);
  minute.study.task_time_s = order.request.time_s;
  auto script2 = fx2.write_script("worker", render_ok(base_strategy(), base_request(), minute));
  CHECK(ExecFixture::sh(run_worker(fx2, script2, "812", in_a_minute)) == 0);
  CHECK(lines_of(fx2.read("ran.txt")).size() == 1);
  CHECK(fx2.read("worker-812.txt").find("less than a task's 60s") != std::string::npos);
}

TEST_CASE("study: a worker is single node only, and needs a request id")
{
  ExecFixture fx;
  auto opts = study_options(fx, 1);
  auto multi = base_strategy();
  multi.nodes = 2;
  CHECK_FALSE(render(multi, base_request(), opts));
  auto ckpt = base_strategy();
  ckpt.kind = rv::model::StrategyKind::checkpoint;
  CHECK_FALSE(render(ckpt, base_request(), opts));
  opts.request_id.clear();
  CHECK_FALSE(render(base_strategy(), base_request(), opts));
}

TEST_CASE("study exec: a signalled worker ends its task with it, which keeps no exit (its next attempt runs)")
{
  ExecFixture fx;
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx, 1, "3")));
  // The task sleeps 3 s before it records its line; the worker is signalled 1 s in (scancel's TERM).
  CHECK(ExecFixture::sh(run_worker(fx, script, "901", "2099-01-01T00:00:00", true) +
                        " sleep 1; kill -TERM $!; wait; sleep 3") == 0);
  CHECK(ExecFixture::sh("test -e '" + fx.path("rv/requests/study-1/tasks/0/a1/exit") + "'") != 0);
  CHECK(ExecFixture::sh("test -e '" + fx.path("rv/requests/study-1/tasks/0/done") + "'") != 0);
  CHECK(fx.read("worker-901.txt").find("its task ended with it") != std::string::npos);
  CHECK(ExecFixture::sh("test -e '" + fx.path("rv/requests/study-1/tasks/.ended.901") + "'") == 0);
}

namespace {

std::string command_line(const rv::proc::Command& c)
{
  std::string line;
  for (const auto& a : c.argv) {
    line += (line.empty() ? "" : " ") + rv::proc::shell_quote(a);
  }
  return line;
}

} // namespace

TEST_CASE("study exec: the top-up's wait ends at a worker's start or end mark, not at its timeout")
{
  using namespace rv::app::study;
  ExecFixture fx;
  const auto dir = fx.path("rv/requests/study-1/tasks");
  // No task directory yet: nothing to list, nothing to wait on.
  CHECK(ExecFixture::sh(command_line(worker_marks_command(dir)) + " >'" + fx.path("marks.txt") + "'") == 0);
  CHECK(fx.read("marks.txt").empty());
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), study_options(fx, 1)));
  CHECK(ExecFixture::sh(run_worker(fx, script, "951")) == 0);
  CHECK(ExecFixture::sh(command_line(worker_marks_command(dir)) + " >'" + fx.path("marks.txt") + "'") == 0);
  const auto marks = parse_worker_marks(fx.read("marks.txt"));
  CHECK(marks.read);
  CHECK(marks.started == std::set<std::string>{"951"});
  CHECK(marks.ended == std::set<std::string>{"951"});
  CHECK(marks.count() == 2);
  CHECK_FALSE(parse_worker_marks("").count());

  // Nothing new: the wait lasts its timeout (1 s here) and says 2.
  CHECK(ExecFixture::sh(command_line(worker_wait_command(dir, 2, 1)) + " >'" + fx.path("w1.txt") + "'") == 0);
  CHECK(fx.read("w1.txt") == "2\n");
  // A worker ends a second into a wait of 30 s: the wait ends with it (well before 30 s) and says 3.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(ExecFixture::sh("( sleep 1; : >'" + dir + "/.ended.952' ) & " + command_line(worker_wait_command(dir, 2, 30)) +
                        " >'" + fx.path("w2.txt") + "'; wait") == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(fx.read("w2.txt") == "3\n");
  // A mark rv has not seen yet (it came after rv's listing): the wait ends at once.
  const auto t1 = std::chrono::steady_clock::now();
  CHECK(ExecFixture::sh(command_line(worker_wait_command(dir, 2, 30)) + " >'" + fx.path("w3.txt") + "'") == 0);
  CHECK(std::chrono::steady_clock::now() - t1 < std::chrono::seconds(10));
  CHECK(fx.read("w3.txt") == "3\n");
}

// Across clusters (docs/studies.md, "Across clusters"): rv's offer steps (study::offer_ops_command)
// and the worker's offer mode, both run for real on one directory.
namespace {

std::string offer_steps(const ExecFixture& fx, const std::vector<rv::app::study::OfferStep>& steps)
{
  return command_line(rv::app::study::offer_ops_command(fx.path("rv/requests/study-1/tasks"), steps)) + " >>'" +
         fx.path("ops.txt") + "'";
}

} // namespace

TEST_CASE("study exec: across clusters a worker runs only the tasks offered, as the attempt offered, a revoked "
          "offer is never run")
{
  using rv::app::study::OfferOp;
  ExecFixture fx;
  auto o = study_options(fx, 4);
  o.study.offers = true;
  o.study.offer_wait_s = 0;
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), o));
  // Task 1 offered as attempt 2 (its first ran elsewhere), task 3 as attempt 1, task 2 offered and
  // taken back; task 0 never offered.
  CHECK(ExecFixture::sh(offer_steps(
            fx, {{OfferOp::offer, 1, 2}, {OfferOp::offer, 3, 1}, {OfferOp::offer, 2, 1}, {OfferOp::revoke, 2, 1}})) ==
        0);
  CHECK(fx.read("ops.txt") == "1 offered\n3 offered\n2 offered\n2 revoked\n");
  CHECK(ExecFixture::sh(run_worker(fx, script, "401")) == 0);
  CHECK(lines_of(fx.read("ran.txt")) == std::vector<std::string>{"1 1 x'1 4", "3 3 x'3 4"});
  CHECK(fx.read("rv/requests/study-1/tasks/1/a2/job") == "401\n");
  CHECK(fx.read("rv/requests/study-1/tasks/3/a1/exit").starts_with("0 "));
  CHECK_FALSE(std::filesystem::exists(fx.path("rv/requests/study-1/tasks/1/a1")));
  CHECK_FALSE(std::filesystem::exists(fx.path("rv/requests/study-1/tasks/2/a1")));
  // The worker cancels no one: rv does, on every cluster.
  CHECK(fx.read("calls.log").find("-t PENDING") == std::string::npos);
  // rv's steps again (a restarted rv applying its record): taken attempts are not offered again,
  // and a revocation of a taken offer loses.
  CHECK(ExecFixture::sh(offer_steps(fx, {{OfferOp::offer, 1, 2}, {OfferOp::revoke, 3, 1}, {OfferOp::revoke, 0, 1}})) ==
        0);
  CHECK(fx.read("ops.txt").ends_with("1 taken\n3 taken\n0 gone\n"));
  // The listing shows the attempts, and no offer is left.
  const auto listing = rv::app::study::task_listing_command(fx.path("rv/requests/study-1/tasks"));
  CHECK(ExecFixture::sh(offer_steps(fx, {{OfferOp::offer, 0, 1}})) == 0);
  std::string list_line;
  for (const auto& a : listing.argv) {
    list_line += (list_line.empty() ? "" : " ") + rv::proc::shell_quote(a);
  }
  CHECK(ExecFixture::sh(list_line + " >'" + fx.path("listing.txt") + "'") == 0);
  CHECK(rv::app::study::open_offers(fx.read("listing.txt")) == std::map<int, int>{{0, 1}});
}

TEST_CASE("study exec: across clusters, once rv says nothing is left to offer, a worker with none ends at once, an "
          "offer made again lifts it")
{
  using rv::app::study::OfferOp;
  ExecFixture fx;
  auto o = study_options(fx, 2);
  o.study.offers = true;
  o.study.offer_wait_s = 30; // without the drain the worker would wait this long, billed, for an offer
  auto script = fx.write_script("worker", render_ok(base_strategy(), base_request(), o));
  const auto drained = fx.path("rv/requests/study-1/tasks/.drained");
  CHECK(ExecFixture::sh(offer_steps(fx, {{OfferOp::offer, 0, 1}, {OfferOp::drain, 0, 0}})) == 0);
  CHECK(fx.read("ops.txt") == "0 offered\n- drained\n");
  CHECK(std::filesystem::exists(drained));
  // The worker takes the offer it finds, then ends at once (not after 30 s): nothing is left.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(ExecFixture::sh(run_worker(fx, script, "501")) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  CHECK(lines_of(fx.read("ran.txt")) == std::vector<std::string>{"0 0 x'0 2"});
  // A task lost later is offered again: the offer removes .drained, so workers wait for offers again.
  CHECK(ExecFixture::sh(offer_steps(fx, {{OfferOp::offer, 1, 1}})) == 0);
  CHECK(fx.read("ops.txt").ends_with("1 offered\n"));
  CHECK_FALSE(std::filesystem::exists(drained));
}
