// rv why end to end against a scripted cluster answering with the outputs captured in
// tests/data/slurm/22.05/why: one batch (one round trip) reads everything; an ended request
// skips the queue's discovery and gets one line.

#include "app/why/why.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::app;
namespace fs = std::filesystem;

namespace {

std::string data_file(const std::string& rel)
{
  std::ifstream in(fs::path(RV_TEST_DATA_DIR) / "slurm" / "22.05" / rel, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing test data " << rel);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has_arg(const std::vector<std::string>& argv, const std::string& word)
{
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

// A login node that answers batches from the captured files and counts the batches.
class Captured final : public proc::Runner {
public:
  Result<proc::Outcome> run(const proc::Command& cmd) override
  {
    ++m_round_trips;
    return answer(cmd.argv);
  }
  Result<std::vector<proc::Outcome>> run_batch(const std::vector<proc::Command>& cmds) override
  {
    ++m_round_trips;
    ++batches;
    std::vector<proc::Outcome> out;
    for (const auto& c : cmds) {
      seen.push_back(c.argv);
      out.push_back(answer(c.argv));
    }
    return out;
  }
  std::string where() const override { return "scripted"; }
  int batches = 0;
  bool gone = false;     // the request's job has left squeue: only sacct knows it
  bool no_start = false; // squeue prints no start (N/A): scontrol's StartTime stands in
  std::string date;      // the cluster's `date +%s %z`, when not the captured one
  std::vector<std::vector<std::string>> seen;

private:
  static proc::Outcome ok(std::string out, int code = 0)
  {
    proc::Outcome o;
    o.exit_code = code;
    o.out = std::move(out);
    return o;
  }
  proc::Outcome answer(const std::vector<std::string>& a) const
  {
    const auto joined = fmt::format("{}", fmt::join(a, " "));
    if (a[0] == "date" && a[1] == "+%s %z") {
      return ok(date.empty() ? data_file("why/date.txt") : date);
    }
    if (has_arg(a, "squeue") && has_arg(a, "-j")) {
      auto text = data_file("why/squeue_request.txt");
      if (no_start) {
        text.replace(text.find("2026-11-25T11:47:00"), 19, "N/A");
      }
      return ok(gone ? "" : text);
    }
    if (has_arg(a, "squeue") && has_arg(a, "PD")) {
      return ok(data_file("why/squeue_pending.txt"));
    }
    if (has_arg(a, "squeue") && has_arg(a, "R,CG")) {
      return ok(data_file("why/squeue_running.txt"));
    }
    if (has_arg(a, "sacct")) {
      return ok(data_file("why/sacct_ended.txt"));
    }
    if (joined == "scontrol -o show job 241") {
      return ok(data_file("why/scontrol_show_job.mine.txt"));
    }
    if (joined == "scontrol -o show partition") {
      return ok(data_file("why/scontrol_show_partition.txt"));
    }
    if (joined == "scontrol -d -o show node") {
      return ok(data_file("why/scontrol_show_node.txt"));
    }
    if (joined == "scontrol show config") {
      return ok(data_file("scontrol_show_config.txt"));
    }
    if (a[0] == "date") {
      return ok("+0000 UTC\n");
    }
    return ok("", 1); // sinfo, readlink: optional for discovery
  }
};

RequestRecord pending_record()
{
  RequestRecord r;
  r.id = "0123abcd";
  r.created_at = "2026-11-25T10:57:15Z";
  r.host = "scripted";
  r.name = "mine";
  r.kind = "run";
  r.state = RequestState::submitted;
  JobRecord j;
  j.strategy_id = "s1";
  j.label = "4x a6000 direct 1h on gpu-a6000";
  j.partition = "gpu-a6000";
  j.gpu_type = "a6000";
  j.job_id = "241";
  j.state = slurm::JobState::pending;
  r.jobs.push_back(j);
  r.plan = {{"strategies", {{{"id", "s1"}, {"est_su", 808.0}, {"nodes", 1}, {"gpus_per_node", 4}}}}};
  return r;
}

} // namespace

TEST_CASE("why flow: a pending request is explained from one batch")
{
  test::lifecycle::World w("why-pending");
  Captured login;
  Env env{login, w.local, w.clock, w.requests, w.secrets, w.settings, w.output, false, 0, "/home/alice", w.dir};
  REQUIRE(w.requests.create("0123abcd", to_json(pending_record())));
  WhyOptions opts;
  opts.replan = false;
  auto rep = explain_request(env, opts); // the default: the latest pending request
  REQUIRE(rep);
  CHECK(login.batches == 1);
  CHECK(rep->round_trips == 1);
  CHECK(rep->status == "pending");
  REQUIRE(rep->jobs.size() == 1);
  const auto& j = rep->jobs[0];
  CHECK(j.reason.code == "Priority");
  CHECK(j.start_estimate == "2026-11-25T11:47:00");
  // 1795604237 is 10:57:17 UTC on the cluster's clock (`date +%s %z`), not the laptop's.
  CHECK(j.start_in_s == 49 * 60 + 43);
  CHECK(j.nodes == "a6000-1");
  CHECK(j.est_su == 808.0);
  REQUIRE(j.ahead);
  CHECK(j.ahead->pending_jobs == 1);
  CHECK(j.ahead->pending[0].job_id == "240");
  CHECK(j.ahead->running_jobs == 2); // matched by the partition's nodes from the discovery
  CHECK(j.ahead->first_end->job_id == "238");
  CHECK(rep->summary.find("is pending: 1 job(s) waiting; the soonest may start in ~49m") != std::string::npos);
  // The batch: the request's jobs, the queue of its partitions, running jobs, sacct with Reason,
  // scontrol per job, then the discovery.
  REQUIRE(login.seen.size() >= 7);
  CHECK(has_arg(login.seen[1], "241"));
  CHECK(has_arg(login.seen[2], "gpu-a6000"));
  CHECK(has_arg(login.seen[4], "JobID,State,ExitCode,Elapsed,Start,End,NodeList,AllocTRES,Partition,Reason,JobName"));
  CHECK(has_arg(login.seen[5], "241"));
  CHECK(std::any_of(login.seen.begin(), login.seen.end(),
                    [](const auto& a) { return has_arg(a, "partition") && has_arg(a, "show"); }));
  login.no_start = true;
  auto from_scontrol = explain_request(env, opts);
  REQUIRE(from_scontrol);
  CHECK(from_scontrol->jobs.at(0).start_estimate == "2026-11-25T11:47:00");
  CHECK(from_scontrol->best_start_in_s == 49 * 60 + 43);
  // Nothing was written: rv why only reads.
  auto stored = w.requests.read("0123abcd");
  REQUIRE(stored);
  CHECK((*stored)["state"] == "submitted");
}

TEST_CASE("why flow: an ended request gets one line, without the queue's discovery")
{
  test::lifecycle::World w("why-ended");
  Captured login;
  Env env{login, w.local, w.clock, w.requests, w.secrets, w.settings, w.output, false, 0, "/home/alice", w.dir};
  auto rec = pending_record();
  rec.state = RequestState::cancelled;
  REQUIRE(w.requests.create(rec.id, to_json(rec)));
  login.gone = true;
  WhyOptions opts;
  opts.key = "0123";
  auto rep = explain_request(env, opts);
  REQUIRE(rep);
  CHECK(login.batches == 1);
  CHECK(rep->status == "ended");
  CHECK(rep->summary == "request 0123abcd ended before any of its 1 job(s) started (CANCELLED)");
  CHECK(render_why(*rep) == rep->summary + "\n");
  CHECK(rep->alternatives.empty());
  CHECK(std::none_of(login.seen.begin(), login.seen.end(),
                     [](const auto& a) { return has_arg(a, "partition") && has_arg(a, "show"); }));
}

TEST_CASE("why flow: a request submitted elsewhere is refused, naming both hosts")
{
  test::lifecycle::World w("why-host");
  Captured login;
  Env env{login, w.local, w.clock, w.requests, w.secrets, w.settings, w.output, false, 0, "/home/alice", w.dir};
  auto rec = pending_record();
  rec.host = "ssh bob@other:22";
  REQUIRE(w.requests.create(rec.id, to_json(rec)));
  WhyOptions opts;
  auto rep = explain_request(env, opts);
  REQUIRE_FALSE(rep);
  CHECK(rep.error().message.find("ssh bob@other:22") != std::string::npos);
  // The one same-host rule of app/request/lookup, its message and hint those of rv stop and rv logs.
  CHECK(rep.error().message ==
        "request " + rec.id + " was submitted on ssh bob@other:22, but rv is connected to scripted");
  CHECK(rep.error().hint.find("someone else's job") != std::string::npos);
  CHECK(login.batches == 0);
}

// UX review 3, N5: a pending job whose estimate is 5 minutes away was said to start "now" (the
// planner's 5-minute "now" applied to Slurm's estimate of a job that is still pending).
TEST_CASE("why flow: a pending job 5 minutes from its estimate starts in ~5m, not now")
{
  test::lifecycle::World w("why-soon");
  Captured login;
  login.date = "1795606920 +0000\n"; // 11:42:00 on the cluster; the estimate is 11:47:00
  Env env{login, w.local, w.clock, w.requests, w.secrets, w.settings, w.output, false, 0, "/home/alice", w.dir};
  REQUIRE(w.requests.create("0123abcd", to_json(pending_record())));
  WhyOptions opts;
  opts.replan = false;
  auto rep = explain_request(env, opts);
  REQUIRE(rep);
  REQUIRE(rep->best_start_in_s);
  CHECK(*rep->best_start_in_s == 300);
  CHECK(rep->summary.find("the soonest may start in ~5m (2026-11-25T11:47:00)") != std::string::npos);
  CHECK(rep->summary.find("start now") == std::string::npos);
  const auto text = render_why(*rep);
  CHECK(text.find("est. start 2026-11-25T11:47:00 (in ~5m)") != std::string::npos);
}
