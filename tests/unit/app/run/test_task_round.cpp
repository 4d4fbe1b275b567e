// `rv run -f` of a study shows each task's output and end (app/run/study_parts.hpp,
// show_task_round): one home for one cluster and across clusters. Each started task's log is read
// from where the last round stopped, on the cluster of its latest attempt, one batch per cluster;
// a new attempt is announced and read from its start; a task's end is shown once; a cluster that
// does not answer is read again at the next round from the same offset.

#include "app/run/study_parts.hpp"
#include "unit/app/run/launch/two_clusters.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace rv;
using namespace rv::app;
using rv::test::lifecycle::Cluster;
using rv::test::lifecycle::TwoClusters;

namespace {

const std::string k_dir_a = "/home/alice/.rv/requests/aaaa0001/tasks";
const std::string k_dir_b = "/home/bob/.rv/requests/bbbb0002/tasks";

study::TaskStatus task(int id, study::TaskState state, int attempts, std::string job = {},
                       std::optional<int> exit = std::nullopt)
{
  study::TaskStatus t;
  t.id = id;
  t.state = state;
  t.attempts = attempts;
  t.job_id = std::move(job);
  t.exit_status = exit;
  if (state == study::TaskState::done || state == study::TaskState::failed) {
    t.started_at = 1000;
    t.ended_at = 1042;
  }
  return t;
}

// A login node whose task logs are `logs` (path -> whole content): `tail -c +N` answers from byte N.
void serve_logs(Cluster& c, std::map<std::string, std::string>& logs, std::vector<std::string>& read)
{
  c.fallback = [&logs, &read](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
    for (std::size_t i = 0; i + 2 < a.size(); ++i) {
      if (a[i] == "tail" && logs.contains(a[i + 1])) {
        const auto from = std::stoul(a[i + 2]) - 1;
        read.push_back(a[i + 1] + "@" + std::to_string(from));
        const auto& text = logs[a[i + 1]];
        return Cluster::ok(from < text.size() ? text.substr(from) : std::string());
      }
    }
    return std::nullopt;
  };
}

study::Counts counts_of(const std::vector<study::TaskStatus>& tasks)
{
  return study::count(tasks);
}

} // namespace

TEST_CASE("study -f: across clusters, each task's output from its own cluster, prefixed, a new attempt and an end "
          "announced once, naming the cluster")
{
  TwoClusters t;
  std::map<std::string, std::string> a_logs = {{k_dir_a + "/0/a1/out", "zero one\nzero tw"}};
  std::map<std::string, std::string> b_logs = {{k_dir_b + "/1/a1/out", "one first\n"}};
  std::vector<std::string> a_read, b_read;
  serve_logs(t.a(), a_logs, a_read);
  serve_logs(t.b(), b_logs, b_read);
  const std::vector<study_parts::TaskPlace> places = {{&t.world.env, k_dir_a, "rvtb"}, {&t.b_env, k_dir_b, "rvtb2"}};
  std::map<int, study_parts::TaskLog> logs;

  // Round 1: task 0 runs on A, task 1 on B, task 2 waits.
  std::vector<study::TaskStatus> tasks = {task(0, study::TaskState::running, 1, "101"),
                                          task(1, study::TaskState::running, 1, "7"),
                                          task(2, study::TaskState::pending, 0)};
  std::vector<std::optional<std::size_t>> where = {0, 1, std::nullopt};
  study_parts::show_task_round(t.world.env, logs, tasks, counts_of(tasks), places, where, false);
  CHECK(t.world.output.stdout_text == "[0] zero one\n[1] one first\n"); // a partial line waits for its end
  CHECK(a_read == std::vector<std::string>{k_dir_a + "/0/a1/out@0"});
  CHECK(b_read == std::vector<std::string>{k_dir_b + "/1/a1/out@0"});
  CHECK(t.a().batch_sizes == std::vector<std::size_t>{1}); // one batch per cluster
  CHECK(t.b().batch_sizes == std::vector<std::size_t>{1});

  // Round 2: task 0 ended on A (its partial line flushed, its end shown with A's name); task 1's
  // worker died and attempt 2 runs on A now: announced, and read from its start there.
  a_logs[k_dir_a + "/0/a1/out"] += "o\n";
  a_logs[k_dir_a + "/1/a2/out"] = "one again\n";
  tasks = {task(0, study::TaskState::done, 1, "101", 0), task(1, study::TaskState::running, 2, "102"),
           task(2, study::TaskState::pending, 0)};
  where = {0, 0, std::nullopt};
  t.world.output.stdout_text.clear();
  study_parts::show_task_round(t.world.env, logs, tasks, counts_of(tasks), places, where, false);
  CHECK(t.world.output.stdout_text == "[0] zero two\n[1] one again\n");
  const auto& err = t.world.output.stderr_text;
  CHECK(err.find("rv: task 1 runs again (attempt 2, on rvtb): its worker ended during attempt 1\n") !=
        std::string::npos);
  CHECK(err.find("rv: task 0 done (exit 0) after 42s on job 101 of rvtb [1/3 ended]\n") != std::string::npos);
  CHECK(a_read.back() == k_dir_a + "/1/a2/out@0");

  // Round 3: nothing new; task 0's end is not shown again and its log is not read again.
  const auto reads_before = a_read.size();
  const auto err_before = err.size();
  study_parts::show_task_round(t.world.env, logs, tasks, counts_of(tasks), places, where, false);
  CHECK(t.world.output.stderr_text.size() == err_before);
  CHECK(a_read.size() == reads_before + 1); // task 1's log only, from where it stopped
  CHECK(a_read.back() == k_dir_a + "/1/a2/out@10");
  CHECK(t.a().unexpected.empty());
  CHECK(t.b().unexpected.empty());
}

TEST_CASE("study -f: on one cluster the lines name no cluster, --no-prefix, a cluster that does not answer is read "
          "again from the same offset")
{
  TwoClusters t;
  std::map<std::string, std::string> a_logs = {{k_dir_a + "/3/a1/out", "alpha\nbeta\n"}};
  std::vector<std::string> a_read;
  serve_logs(t.a(), a_logs, a_read);
  const std::vector<study_parts::TaskPlace> here = {{&t.world.env, k_dir_a, {}}};
  std::map<int, study_parts::TaskLog> logs;
  std::vector<study::TaskStatus> tasks = {task(3, study::TaskState::running, 1, "55")};
  const std::vector<std::optional<std::size_t>> where = {std::size_t{0}};

  t.a().lose_next_batch_answer = Error{ErrorCode::unreachable, "the link dropped", {}};
  study_parts::show_task_round(t.world.env, logs, tasks, counts_of(tasks), here, where, true);
  CHECK(t.world.output.stdout_text.empty()); // nothing shown, nothing counted as read
  study_parts::show_task_round(t.world.env, logs, tasks, counts_of(tasks), here, where, true);
  CHECK(t.world.output.stdout_text == "alpha\nbeta\n"); // --no-prefix: the lines as the task wrote them
  CHECK(a_read.back() == k_dir_a + "/3/a1/out@0");      // the same offset as the lost read

  tasks = {task(3, study::TaskState::failed, 1, "55", 3)};
  study_parts::show_task_round(t.world.env, logs, tasks, counts_of(tasks), here, where, true);
  CHECK(t.world.output.stderr_text == "rv: task 3 failed (exit 3) after 42s on job 55 [1/1 ended]\n");
  CHECK(t.world.output.stdout_text == "alpha\nbeta\n");
}
