// rv why's pure parts on outputs captured from the testbed with a job held behind a
// higher-priority one (tests/data/slurm/22.05/why, testbed/capture_why.sh).

#include "app/why/why.hpp"
#include "slurm/sacct.hpp"
#include "slurm/scontrol.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::app;
namespace fs = std::filesystem;

namespace {

const fs::path why_data = fs::path(RV_TEST_DATA_DIR) / "slurm" / "22.05" / "why";

std::string read_data(const std::string& name)
{
  std::ifstream in(why_data / name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing test data " << name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<slurm::SqueueJob> rows(const std::string& name)
{
  auto r = slurm::parse_squeue(read_data(name), why_queue_format);
  REQUIRE(r);
  return *r;
}

model::Strategy make_strategy(const std::string& label, const std::string& type, std::optional<std::int64_t> wait,
                              double su, model::StrategyKind kind = model::StrategyKind::direct)
{
  model::Strategy s;
  s.id = "s1";
  s.label = label;
  s.gpu_type = type;
  s.partition = "gpu-" + type;
  s.est_wait_s = wait;
  s.est_su = su;
  s.kind = kind;
  return s;
}

} // namespace

TEST_CASE("why: the captured pending job reads as held behind a higher-priority one")
{
  const auto mine = rows("squeue_request.txt");
  REQUIRE(mine.size() == 1);
  CHECK(mine[0].job_id == "241");
  CHECK(mine[0].state == "PENDING");
  CHECK(mine[0].reason == "Priority");
  CHECK(mine[0].user == "rvtest");
  CHECK(mine[0].priority == 4294851572);
  CHECK(mine[0].nodes == "a6000-1"); // %Y: where backfill plans it
  REQUIRE(mine[0].start_time);
  CHECK(slurm::format_cluster_time(*mine[0].start_time) == "2026-11-25T11:47:00");
  const auto r = slurm::explain_reason(mine[0].reason);
  CHECK(r.plain == "other jobs are ahead in the queue");
  CHECK(r.kind == slurm::ReasonKind::scheduling);
  CHECK_FALSE(r.hint.empty());

  auto queue = rows("squeue_pending.txt");
  const auto running = rows("squeue_running.txt");
  REQUIRE(queue.size() == 6);
  REQUIRE(running.size() == 2);
  CHECK(queue.back().priority == 0); // held
  queue.insert(queue.end(), running.begin(), running.end());
  const auto a = whats_ahead(mine[0], queue, {"a6000-1"});
  CHECK(a.partition == "gpu-a6000");
  CHECK(a.gpu_type == "a6000");
  CHECK(a.gpus == 4);
  // Only the blocker: the held, dependent, begin-time and too-long jobs are not in line, and all
  // but the blocker were submitted after it with a lower priority.
  CHECK(a.pending_jobs == 1);
  CHECK(a.pending_gpus == 8);
  REQUIRE(a.pending.size() == 1);
  CHECK(a.pending[0].job_id == "240");
  CHECK(a.pending[0].name == "blocker");
  CHECK(a.pending[0].start_estimate == "2026-11-25T11:17:15");
  CHECK(a.running_jobs == 2);
  CHECK(a.running_gpus == 8);
  REQUIRE(a.first_end);
  CHECK(a.first_end->job_id == "238");
  CHECK(a.first_end->start_estimate == "2026-11-25T11:07:15");

  // Without the partition's node list, running jobs count by partition name: the same here.
  CHECK(whats_ahead(mine[0], queue, {}).running_jobs == 2);
  // Running jobs on other nodes do not free these GPUs.
  CHECK(whats_ahead(mine[0], queue, {"h200-1"}).running_jobs == 0);
}

TEST_CASE("why: a job of another GPU type or a lower priority is not ahead")
{
  auto mine = rows("squeue_request.txt").at(0);
  auto queue = rows("squeue_pending.txt");
  for (auto& j : queue) {
    j.tres_per_node = "gres:gpu:h200:4"; // every other job wants H200s
  }
  CHECK(whats_ahead(mine, queue, {}).pending_jobs == 0);
  queue = rows("squeue_pending.txt");
  mine.priority = 4294851574; // above the blocker
  CHECK(whats_ahead(mine, queue, {}).pending_jobs == 0);
  mine.priority = 4294851573; // equal: the lower job id (submitted first) goes first
  CHECK(whats_ahead(mine, queue, {}).pending_jobs == 1);
}

TEST_CASE("why: scontrol and sacct give the dependency, the planned nodes, the priority and the final reason")
{
  auto mine = slurm::parse_scontrol_jobs(read_data("scontrol_show_job.mine.txt"));
  REQUIRE(mine);
  REQUIRE(mine->size() == 1);
  CHECK(mine->at(0).priority == 4294851572);
  CHECK(mine->at(0).sched_nodes == "a6000-1");
  CHECK(mine->at(0).dependency.empty());
  auto dep = slurm::parse_scontrol_jobs(read_data("scontrol_show_job.dep.txt"));
  REQUIRE(dep);
  CHECK(dep->at(0).dependency == "afterok:240(unfulfilled)");
  CHECK(dep->at(0).reason == "Dependency");
  CHECK(slurm::plain_reason(dep->at(0).reason) == "waiting for the job it depends on");
  auto held = slurm::parse_scontrol_jobs(read_data("scontrol_show_job.held.txt"));
  REQUIRE(held);
  CHECK(held->at(0).priority == 0);
  CHECK(slurm::explain_reason(held->at(0).reason).hint == "scontrol release JOBID");
  auto later = slurm::parse_scontrol_jobs(read_data("scontrol_show_job.later.txt"));
  REQUIRE(later);
  CHECK(slurm::explain_reason(later->at(0).reason).kind == slurm::ReasonKind::begin_time);

  auto acct = slurm::parse_sacct(read_data("sacct_ended.txt"),
                                 "JobID,State,ExitCode,Elapsed,Start,End,NodeList,AllocTRES,Partition,Reason,JobName");
  REQUIRE(acct);
  REQUIRE(acct->size() == 4); // the .batch step is skipped
  CHECK(acct->at(1).job_id == "241");
  CHECK(acct->at(1).state == "CANCELLED");
  CHECK(acct->at(1).reason.empty()); // "None"
  CHECK(acct->at(1).name == "mine");
}

TEST_CASE("why: the variants worth re-planning")
{
  model::JobRequest r;
  r.gpus = 4;
  r.gpu_type = "a6000";
  r.time_s = 7200;
  auto v = probe_variants(r);
  REQUIRE(v.size() == 3);
  CHECK(v[0].request.gpu_type == std::optional<std::string>("a6000"));
  CHECK(v[1].change == "another GPU type");
  CHECK_FALSE(v[1].request.gpu_type);
  CHECK(v[2].request.gpus == 2);
  CHECK(v[2].flags == std::vector<std::string>{"-g", "2"});
  r.gpus = 1;
  r.gpu_type.reset();
  CHECK(probe_variants(r).size() == 1); // nothing to relax but the queue itself

  r.time_s = 7200;
  auto d = derived_variants(r, {1830, 7200, 300, 3600});
  REQUIRE(d.size() == 4); // 1h, 30m, --checkpoint, --time-min
  CHECK(d[0].request.time_s == 3600);
  CHECK(d[0].flags == std::vector<std::string>{"--time", "1h"});
  CHECK(d[1].request.time_s == 1800); // whole minutes
  CHECK(d[2].flags == std::vector<std::string>{"--checkpoint"});
  CHECK(d[2].only_kinds == std::vector<model::StrategyKind>{model::StrategyKind::checkpoint});
  CHECK(d[3].flags == std::vector<std::string>{"--time-min"});
  r.allow_checkpoint = r.allow_time_min = true;
  CHECK(derived_variants(r, {}).empty());
}

TEST_CASE("why: alternatives are changes that start sooner, not the request's own siblings")
{
  model::JobRequest r;
  r.gpus = 4;
  r.gpu_type = "a6000";
  auto v = probe_variants(r);
  std::vector<VariantPlan> plans = {
      {v[0], {make_strategy("1x4 a6000 direct 1h on gpu-a6000", "a6000", 3000, 808)}},
      {v[1],
       {make_strategy("1x4 a6000 direct 1h on gpu-a6000", "a6000", 3000, 808),
        make_strategy("1x4 h200 backfill 1h on gpu-h200", "h200", 0, 4040),
        make_strategy("1x4 v100 direct 1h", "v100", 2900, 600),
        make_strategy("1x4 a100 direct 1h", "a100", std::nullopt, 2000)}},
      {v[2], {make_strategy("1x2 a6000 backfill 1h on gpu-a6000", "a6000", 100, 404)}},
  };
  const std::vector<std::string> siblings = {"1x4 a6000 direct 1h on gpu-a6000"};
  auto alts = pick_alternatives(plans, siblings, 3000, 300, 300, 6);
  REQUIRE(alts.size() == 2);
  CHECK(alts[0].strategy.label == "1x4 h200 backfill 1h on gpu-h200");
  CHECK(alts[0].change == "another GPU type");
  CHECK(alts[0].flags == std::vector<std::string>{"-t", "h200"});
  CHECK(alts[0].strategy.id.empty());
  CHECK(alts[1].strategy.label == "1x2 a6000 backfill 1h on gpu-a6000");
  CHECK(alts[1].flags == std::vector<std::string>{"-g", "2"});
  // v100 starts 100 s sooner only: within the margin, not worth a change. a100: no estimate.
  CHECK(pick_alternatives(plans, siblings, 3000, 300, 300, 1).size() == 1);
  // Without an estimate for the request, only what starts now counts.
  auto unknown = pick_alternatives(plans, siblings, std::nullopt, 300, 300, 6);
  REQUIRE(unknown.size() == 2);
  CHECK(unknown[0].strategy.est_wait_s == 0);
  CHECK(unknown[1].strategy.est_wait_s == 100);
  // UX review 3, N5: a request 5 minutes from its start still hears of a type that starts now; the
  // margin is half its wait (at least a minute, at most the planner's "now").
  CHECK(alternative_margin_s(294, 300) == 147);
  CHECK(alternative_margin_s(3000, 300) == 300);
  CHECK(alternative_margin_s(90, 300) == 60);
  CHECK(alternative_margin_s(std::nullopt, 300) == 300);
  auto soon = pick_alternatives(plans, siblings, 294, 300, alternative_margin_s(294, 300), 6);
  REQUIRE(soon.size() == 2);
  CHECK(soon[0].strategy.label == "1x4 h200 backfill 1h on gpu-h200");   // starts now: 294 s sooner
  CHECK(soon[1].strategy.label == "1x2 a6000 backfill 1h on gpu-a6000"); // 100 s: 194 s sooner
  CHECK(pick_alternatives(plans, siblings, 294, 300, 300, 6).empty());   // the old fixed margin hid both
  // Kinds a variant keeps: a --checkpoint variant offers only checkpoint strategies.
  Variant ck{"checkpoint segments", {"--checkpoint"}, r, {model::StrategyKind::checkpoint}};
  std::vector<VariantPlan> ck_plans = {
      {ck,
       {make_strategy("1x4 a6000 direct 1h on gpu-a6000 (again)", "a6000", 0, 808),
        make_strategy("1x4 a6000 checkpoint 2x30m on gpu-a6000", "a6000", 0, 808, model::StrategyKind::checkpoint)}}};
  auto c = pick_alternatives(ck_plans, siblings, 3000, 300, 300, 6);
  REQUIRE(c.size() == 1);
  CHECK(c[0].strategy.kind == model::StrategyKind::checkpoint);
  CHECK(c[0].flags == std::vector<std::string>{"--checkpoint"});
}

TEST_CASE("why: the request a record was made with, stored or read back from its plan")
{
  model::JobRequest r;
  r.gpus = 4;
  r.gpu_type = "a6000";
  r.time_s = 5400;
  r.mem_mb = 16384;
  r.allow_checkpoint = true;
  r.exclude_nodes = {"a6000-2"};
  r.qos = "normal";
  RequestRecord rec;
  rec.id = "0123abcd";
  rec.options = request_options_json(r);
  auto back = recorded_request(rec);
  REQUIRE(back);
  CHECK(back->gpus == 4);
  CHECK(back->gpu_type == std::optional<std::string>("a6000"));
  CHECK(back->time_s == 5400);
  CHECK(back->mem_mb == std::optional<std::int64_t>(16384));
  CHECK_FALSE(back->cpus_per_task);
  CHECK(back->allow_checkpoint);
  CHECK(back->exclude_nodes == std::vector<std::string>{"a6000-2"});
  CHECK(back->qos == "normal");
  // Through the record's JSON, as the store keeps it.
  auto stored = request_from_json(to_json(rec));
  REQUIRE(stored);
  CHECK(recorded_request(*stored)->time_s == 5400);

  RequestRecord old; // before `options`: the plan says enough
  old.id = "0ld0ld00";
  old.plan = {{"strategies",
               {{{"id", "s1"}, {"nodes", 2}, {"gpus_per_node", 4}, {"total_time_s", 36000}, {"kind", "checkpoint"}}}}};
  auto guessed = recorded_request(old);
  REQUIRE(guessed);
  CHECK(guessed->gpus == 8);
  CHECK(guessed->time_s == 36000);
  CHECK(guessed->allow_checkpoint);
  CHECK_FALSE(guessed->gpu_type);
  RequestRecord empty;
  empty.id = "e";
  CHECK_FALSE(recorded_request(empty));
}

TEST_CASE("why: the JSON shape and the text of a pending report")
{
  WhyReport rep;
  rep.request_id = "0123abcd";
  rep.status = "pending";
  rep.summary = "request 0123abcd is pending: 1 job(s) waiting; the soonest may start in ~50m (2026-11-25T11:47:00)";
  WhyJob j;
  j.strategy_id = "s1";
  j.job_id = "241";
  j.label = "1x4 a6000 direct 1h on gpu-a6000";
  j.state = slurm::JobState::pending;
  j.raw_reason = "Priority";
  j.reason = slurm::explain_reason("Priority");
  j.start_estimate = "2026-11-25T11:47:00";
  j.start_in_s = 3000;
  j.nodes = "a6000-1";
  auto queue = rows("squeue_pending.txt");
  auto running = rows("squeue_running.txt");
  queue.insert(queue.end(), running.begin(), running.end());
  j.ahead = whats_ahead(rows("squeue_request.txt").at(0), queue, {"a6000-1"});
  rep.jobs.push_back(j);
  Alternative a{"another GPU type", {"-t", "h200"}, make_strategy("1x4 h200 backfill 1h on gpu-h200", "h200", 0, 4040)};
  rep.alternatives.push_back(a);
  auto doc = to_json(rep);
  CHECK(doc["status"] == "pending");
  CHECK(doc["jobs"][0]["reason"]["code"] == "Priority");
  CHECK(doc["jobs"][0]["reason"]["text"] == "other jobs are ahead in the queue");
  CHECK(doc["jobs"][0]["reason"]["kind"] == "scheduling");
  CHECK(doc["jobs"][0]["start_in_s"] == 3000);
  CHECK(doc["jobs"][0]["ahead"]["pending_jobs"] == 1);
  CHECK(doc["jobs"][0]["ahead"]["first_end"]["job_id"] == "238");
  CHECK(doc["alternatives"][0]["flags"] == nlohmann::json({"-t", "h200"}));
  CHECK(doc["alternatives"][0]["start_in_s"] == 0);
  CHECK(doc["alternatives"][0]["strategy"]["gpu_type"] == "h200");
  auto text = render_why(rep);
  CHECK(text.find("other jobs are ahead in the queue (Priority)") != std::string::npos);
  CHECK(text.find("ahead of it: 1 higher-priority job needs 8 a6000 GPUs (240 blocker of rvtest") != std::string::npos);
  CHECK(text.find("the first ends 2026-11-25T11:07:15 (job 238") != std::string::npos);
  CHECK(text.find("alternatives that would start sooner (they change the request") != std::string::npos);
  CHECK(text.find("1x4 h200 backfill 1h on gpu-h200") != std::string::npos);
  CHECK(text.find("-t h200") != std::string::npos);

  rep.status = "ended";
  rep.summary = "request 0123abcd ended: COMPLETED (job 241, ...)";
  CHECK(render_why(rep) == rep.summary + "\n"); // one line for a request that waits no more
}
