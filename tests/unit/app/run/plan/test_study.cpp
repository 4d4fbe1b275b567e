// A study's pure parts (app/run/plan/study.hpp): the --array grammar, sweeps, the tasks' commands, the
// pool of workers within the limits, and what the cluster's task directory says.

#include "app/run/pipeline.hpp"
#include "app/run/plan/study.hpp"
#include "cli/plan_options.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace rv::app::study;
namespace app = rv::app;
namespace cli = rv::cli;
namespace model = rv::model;
using rv::ErrorCode;

TEST_CASE("study: --array takes Slurm's syntax")
{
  auto a = parse_array_spec("0-15");
  REQUIRE(a);
  CHECK(a->ids.size() == 16);
  CHECK(a->ids.front() == 0);
  CHECK(a->ids.back() == 15);
  CHECK(a->max_running == 0);

  auto b = parse_array_spec("1,3,8-10");
  REQUIRE(b);
  CHECK(b->ids == std::vector<int>{1, 3, 8, 9, 10});

  auto c = parse_array_spec("0-31%8");
  REQUIRE(c);
  CHECK(c->ids.size() == 32);
  CHECK(c->max_running == 8);

  auto d = parse_array_spec("0-10:5");
  REQUIRE(d);
  CHECK(d->ids == std::vector<int>{0, 5, 10});

  auto e = parse_array_spec("5,1-3,2"); // sorted, each once
  REQUIRE(e);
  CHECK(e->ids == std::vector<int>{1, 2, 3, 5});

  auto cap = parse_array_spec("%4"); // a sweep's cap
  REQUIRE(cap);
  CHECK(cap->ids.empty());
  CHECK(cap->max_running == 4);
}

TEST_CASE("study: a bad --array is one line that names the part, with Slurm's syntax as the hint")
{
  for (const char* bad : {"", "a-b", "3-1", "1,,2", "1,", "0-15%0", "0-15%", "0-3:0", "-1", "1-", "0-99999999"}) {
    CAPTURE(bad);
    auto r = parse_array_spec(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK(r.error().message.find('\n') == std::string::npos);
    CHECK(r.error().message.starts_with("--array "));
    CHECK(r.error().hint.find("0-31%8") != std::string::npos);
  }
  CHECK(parse_array_spec("3-1").error().message.find("ends before it starts") != std::string::npos);
}

TEST_CASE("study: --sweep NAME=v1,v2 and the cartesian product in a stable order")
{
  auto lr = parse_sweep("lr=1e-4,3e-4,1e-3");
  REQUIRE(lr);
  CHECK(lr->name == "lr");
  CHECK(lr->values == std::vector<std::string>{"1e-4", "3e-4", "1e-3"});
  auto model = parse_sweep("model=small,base");
  REQUIRE(model);
  auto grid = cartesian({*lr, *model});
  REQUIRE(grid.size() == 6);
  CHECK(grid[0] == Params{{"lr", "1e-4"}, {"model", "small"}});
  CHECK(grid[1] == Params{{"lr", "1e-4"}, {"model", "base"}});
  CHECK(grid[5] == Params{{"lr", "1e-3"}, {"model", "base"}});

  for (const char* bad : {"lr", "=1,2", "1x=1", "lr=1,,2", "lr=", "task=1,2", "a-b=1"}) {
    CAPTURE(bad);
    auto r = parse_sweep(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK_FALSE(r.error().hint.empty());
  }
}

TEST_CASE("study: --sweep-file is a list of objects")
{
  auto g = parse_sweep_file(R"([{"lr": 0.0001, "model": "small", "fp16": true}, {"lr": 3e-4, "model": "it's"}])");
  REQUIRE(g);
  REQUIRE(g->size() == 2);
  CHECK((*g)[0] == Params{{"fp16", "true"}, {"lr", "0.0001"}, {"model", "small"}});
  CHECK((*g)[1][1] == std::pair<std::string, std::string>{"model", "it's"});
  for (const char* bad : {"{", "{}", "[]", "[1]", R"([{"a": [1]}])", R"([{"a b": 1}])", R"([{"task": 1}])"}) {
    CAPTURE(bad);
    auto r = parse_sweep_file(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
  }
}

TEST_CASE("study: {task} and {NAME} are replaced shell-quoted, every other brace stays")
{
  CHECK(substitute("python train.py --seed {task}", 7, {}) == "python train.py --seed 7"); // a plain word as it is
  CHECK(substitute("echo {lr} {model} ${HOME} {a,b} {other} {task", 2, {{"lr", "1e-4"}, {"model", "it's"}}) ==
        "echo 1e-4 'it'\\''s' ${HOME} {a,b} {other} {task");
  CHECK(substitute("echo ${lr}", 0, {{"lr", "1"}}) == "echo ${lr}"); // the shell's own expansion
  CHECK(substitute("{task}{task}", 3, {}) == "33");
  CHECK(substitute("run {x}", 0, {{"x", "a b;$(id)"}}) == "run 'a b;$(id)'");
}

TEST_CASE("study: make_study numbers a sweep 0..N-1 and refuses mixing --array ids with a sweep")
{
  StudyFlags f;
  f.sweeps = {"lr=1,2", "m=a,b"};
  f.array = "%2";
  auto s = make_study(f, "run {lr} {m} {task}", 600);
  REQUIRE(s);
  REQUIRE(s->tasks.size() == 4);
  CHECK(s->max_running == 2);
  CHECK(s->names == std::vector<std::string>{"lr", "m"});
  CHECK(s->tasks[3].id == 3);
  CHECK(s->tasks[3].command == "run 2 b 3");
  CHECK(sweep_variable("lr") == "RV_SWEEP_LR");

  StudyFlags mixed = f;
  mixed.array = "0-3";
  auto m = make_study(mixed, "x", 600);
  REQUIRE_FALSE(m);
  CHECK(m.error().hint.find("%K") != std::string::npos);

  StudyFlags arr;
  arr.array = "2,4";
  auto a = make_study(arr, "echo {task}", 600);
  REQUIRE(a);
  CHECK(a->tasks[1].id == 4);
  CHECK(a->tasks[1].command == "echo 4");

  StudyFlags cap_only;
  cap_only.array = "%3";
  CHECK_FALSE(make_study(cap_only, "x", 600));

  StudyFlags clash;
  clash.sweeps = {"lr=1", "LR=2"};
  CHECK_FALSE(make_study(clash, "x", 600));

  StudyFlags retries;
  retries.array = "0-1";
  retries.retries = -1;
  CHECK_FALSE(make_study(retries, "x", 600));

  // The record's form reads back whole.
  auto back = study_from_json(to_json(*s));
  REQUIRE(back);
  CHECK(back->tasks.size() == 4);
  CHECK(back->tasks[2].params == s->tasks[2].params);
  CHECK(back->max_running == 2);
  CHECK(back->task_time_s == 600);
}

namespace {

model::Strategy strategy(const char* id, std::optional<std::int64_t> wait, double su, std::int64_t walltime = 600)
{
  model::Strategy s;
  s.id = id;
  s.nodes = 1;
  s.gpus_per_node = 1;
  s.est_wait_s = wait;
  s.est_su = su;
  s.walltime_s = walltime;
  return s;
}

// Every strategy with room for `slots` workers (the plan saw that many free GPUs).
std::vector<KindPool> room_for(std::size_t strategies, int slots)
{
  std::vector<KindPool> out(strategies);
  for (auto& k : out) {
    k.slots = slots;
  }
  return out;
}

int count_of(const PoolPlan& p, std::size_t k)
{
  return static_cast<int>(std::count(p.submit.begin(), p.submit.end(), k));
}

} // namespace

TEST_CASE("study: the pool never asks for more than the tasks, %K and the limits less the headroom allow")
{
  // Four equal strategies with room for many: every worker shortens the study at no SU, so the pool
  // fills up to its ceiling.
  const std::vector<model::Strategy> ranked = {strategy("s1", 0, 1.0), strategy("s2", 0, 1.0), strategy("s3", 0, 1.0),
                                               strategy("s4", 0, 1.0)};
  PoolInput in;
  in.unfinished = 16;
  in.kinds = room_for(4, 100);
  auto p = plan_pool(ranked, 600, in);
  CHECK(p.target == 16);
  CHECK(p.submit.size() == 16);

  in.max_running = 8;
  CHECK(plan_pool(ranked, 600, in).submit.size() == 8);

  in.limits.max_submit_jobs = 5; // 5 - headroom 1
  p = plan_pool(ranked, 600, in);
  CHECK(p.target == 4);
  CHECK(p.submit.size() == 4);
  CHECK(p.notes.back().find("MaxSubmitJobs 5") != std::string::npos);

  in.other_jobs = 2; // the user's own jobs count too
  CHECK(plan_pool(ranked, 600, in).target == 2);

  in.workers_alive = 2; // topped up only to the target
  in.kinds[0].pending = 2;
  CHECK(plan_pool(ranked, 600, in).submit.empty());

  PoolInput gpus;
  gpus.unfinished = 10;
  gpus.kinds = room_for(4, 100);
  gpus.limits.max_gpus = 4; // GrpTRES gres/gpu=4: 4 one-GPU workers, less the headroom
  CHECK(plan_pool(ranked, 600, gpus).target == 3);
  CHECK(plan_pool(ranked, 600, gpus).submit.size() == 3);

  PoolInput none;
  none.unfinished = 0;
  CHECK(plan_pool(ranked, 600, none).submit.empty());

  PoolInput full;
  full.unfinished = 3;
  full.limits.max_jobs = 1; // no room at all past the headroom
  CHECK(plan_pool(ranked, 600, full).submit.empty());
}

TEST_CASE("study: the pool goes where workers start soonest for the least SU, as many as the plan saw room for")
{
  // 16 tasks of 10 s on the testbed's four partitions (#41's benchmark, seed 527145): v100 and a6000
  // start at once (a6000 1.5x v100's SU), a100 after 18 s at 3.4x, h200 after 26 s at 4x.
  const std::vector<model::Strategy> ranked = {strategy("v100", 0, 1.0, 10), strategy("a6000", 0, 1.5, 10),
                                               strategy("a100", 18, 3.4, 10), strategy("h200", 26, 4.0, 10)};
  PoolInput in;
  in.unfinished = 16;
  in.kinds = room_for(4, 4);
  auto p = plan_pool(ranked, 10, in);
  REQUIRE_FALSE(p.submit.empty());
  CHECK(p.submit.front() == 0);    // the cheapest of the soonest first
  CHECK(count_of(p, 0) == 4);      // every free v100, no more (the plan saw 4)
  CHECK(count_of(p, 3) == 0);      // never the slow and dear h200 (round robin put 4 there)
  CHECK(count_of(p, 2) == 0);      // nor a100
  CHECK(p.makespan_s < 16.0 * 10); // better than one worker
  CHECK(p.su >= 16.0);             // every task costs at least v100's SU

  // Room unknown (a top-up's kinds from an old record): one at a time on each strategy.
  PoolInput unknown;
  unknown.unfinished = 16;
  auto q = plan_pool(ranked, 10, unknown);
  CHECK(count_of(q, 0) == 1);

  // SU outweighs time: with v100 alone as fast as possible, the dear strategies add nothing.
  PoolInput few;
  few.unfinished = 2;
  few.kinds = room_for(4, 4);
  auto f = plan_pool(ranked, 10, few);
  CHECK(f.submit == std::vector<std::size_t>{0, 0});
}

TEST_CASE("study: a top-up adds workers where GPUs freed while others pend, and cancels pending ones no longer needed")
{
  const std::vector<model::Strategy> ranked = {strategy("v100", 0, 1.0, 10), strategy("h200", 26, 4.0, 10)};
  PoolInput in;
  in.unfinished = 4;
  in.unclaimed = 4;
  in.workers_alive = 4;
  in.kinds = room_for(2, 4);
  in.kinds[1].pending = 4; // pending for 120 s against an expected 26 s: late
  in.kinds[1].pending_for_s = 120;
  in.kinds[1].waited_s = 120;
  auto p = plan_pool(ranked, 10, in);
  CHECK(count_of(p, 0) == 4); // v100's workers ended: their GPUs take the rest, counted pending workers or not
  CHECK(count_of(p, 1) == 0);
  REQUIRE(p.cancel.size() == 2);
  CHECK(p.cancel[0] == 0);
  CHECK(p.cancel[1] == 4); // h200's would start after v100's are done

  // Not late yet (pending 10 s of an expected 26 s), as cheap as v100, and no room elsewhere: some are
  // kept (no new ones on v100: one pends there already); at 4x the SU, none would be.
  const std::vector<model::Strategy> equal = {strategy("v100", 0, 1.0, 10), strategy("a6000", 26, 1.0, 10)};
  PoolInput waiting;
  waiting.unfinished = 4;
  waiting.workers_alive = 4;
  waiting.kinds = room_for(2, 4);
  waiting.kinds[0].slots = 0;
  waiting.kinds[0].pending = 1; // v100 has one pending too: no more room there
  waiting.kinds[1].pending = 4;
  waiting.kinds[1].pending_for_s = 10;
  waiting.workers_alive = 5;
  auto w = plan_pool(equal, 10, waiting);
  CHECK(w.submit.empty());
  CHECK(w.cancel[0] == 0);
  CHECK(w.cancel[1] < 4); // some of them have tasks in the model
  CHECK(plan_pool(ranked, 10, waiting).cancel[1] == 4);

  // Every task claimed by running workers: the pending ones have nothing left to do.
  PoolInput claimed;
  claimed.unfinished = 2;
  claimed.unclaimed = 0;
  claimed.workers_alive = 4;
  claimed.kinds = room_for(2, 4);
  claimed.kinds[0].running = 2;
  claimed.kinds[1].pending = 2;
  auto c = plan_pool(ranked, 10, claimed);
  CHECK(c.submit.empty());
  CHECK(c.cancel[1] == 2);
}

TEST_CASE("study: a running worker of one task is replaced after it, the study's ended tasks tell their real length")
{
  const std::vector<model::Strategy> one = {strategy("v100", 0, 1.0, 60)};
  PoolInput in;
  in.unfinished = 6;
  in.unclaimed = 2;
  in.workers_alive = 4;
  in.kinds = room_for(1, 4);
  in.kinds[0].running = 4;
  // Each running worker ends with its task (its walltime holds one): a new worker takes one of the
  // two tasks left at once rather than after a replacement's wait and poll.
  auto p = plan_pool(one, 60, in);
  CHECK(count_of(p, 0) == 1);
  // Workers of 4 tasks' walltime keep claiming: the study ends no later.
  auto four = plan_pool({strategy("v100", 0, 4.0, 240)}, 60, in);
  CHECK(four.makespan_s <= p.makespan_s);
  // Tasks that took 10 s of their 60: a 60 s worker holds several of them; the study ends sooner.
  in.task_s = 10;
  auto quick = plan_pool(one, 60, in);
  CHECK(quick.makespan_s < p.makespan_s);
}

TEST_CASE("study: workers that hold several tasks win unless their longer walltime waits much longer")
{
  PoolInput in;
  in.unfinished = 16;
  in.kinds = room_for(1, 4);
  // One task per worker: after each task a new worker waits again (here 20 s).
  const auto one = plan_pool({strategy("s1", 20, 1.0, 60)}, 60, in);
  // Four per worker, the same wait: no new wait between tasks, the same SU per task.
  const auto four = plan_pool({strategy("s1", 20, 4.0, 240)}, 60, in);
  CHECK(four.makespan_s < one.makespan_s);
  CHECK(four.score < one.score);
  // Four per worker, but no backfill window holds the longer walltime: 20 minutes' wait.
  const auto late = plan_pool({strategy("s1", 1200, 4.0, 240)}, 60, in);
  CHECK(late.score > one.score);
}

TEST_CASE("study: --time 10s is a minute of walltime, but a task keeps its 10 s: a worker of a minute holds several")
{
  // The benchmark's study (docs/benchmark-time-to-gpu.md, "Studies"): 16 tasks of `--time 10s`.
  cli::PlanFlags flags;
  flags.time = "10s";
  auto request = cli::to_request(flags);
  REQUIRE(request);
  CHECK(request->time_s == 60); // the walltime: Slurm's whole minutes
  auto asked = cli::time_asked_s(flags);
  REQUIRE(asked);
  app::JobOrder order;
  order.request = *request;
  order.task_time_s = *asked;
  CHECK(order.study_task_time_s() == 10);
  StudyFlags f;
  f.array = "0-15";
  auto st = make_study(f, "train --seed {task}", order.study_task_time_s());
  REQUIRE(st);
  CHECK(st->task_time_s == 10); // what the workers' claim check and the pool's model use

  // Two free v100s whose one-minute workers start at once: each holds 6 tasks of 10 s (its walltime
  // over a task's time), so two workers run the 16 tasks back to back, with one replacement each.
  const std::vector<model::Strategy> v100 = {strategy("v100", 0, 1.0, 60)};
  PoolInput in;
  in.unfinished = 16;
  in.kinds = room_for(1, 2);
  const auto p = plan_pool(v100, st->task_time_s, in);
  CHECK(p.submit.size() == 2);
  // The workers claim 5 s after submission (sbatch, scheduling, set-up: k_worker_start_s), 12 tasks
  // in their minute, 4 after a replacement's top-up and start (10 s): 2 x 10 s more.
  CHECK(p.makespan_s == doctest::Approx(5 + 60 + 10 + 20));
  // Each task costs a sixth of a worker's SU: 16 tasks, 16/6 of it (a minute per task would be 16).
  CHECK(p.su == doctest::Approx(16.0 / 6));
  // Planned with the minute (as before), each worker held one task and every task paid a new
  // worker's SU and a replacement's wait.
  const auto minute = plan_pool(v100, request->time_s, in);
  CHECK(minute.su == doctest::Approx(16.0));
  CHECK(minute.makespan_s > p.makespan_s);
}

TEST_CASE("study: a top-up leaves a task to a cheap worker about to free rather than start a dearer one")
{
  // v100 and a6000 (1.2x the SU) both free; one v100 worker runs, 9 s into a task of 10 s, with
  // 40 s of its allocation left; one task waits.
  const std::vector<model::Strategy> ranked = {strategy("v100", 0, 1.0, 60), strategy("a6000", 0, 1.2, 60)};
  PoolInput in;
  in.unfinished = 2;
  in.unclaimed = 1;
  in.workers_alive = 1;
  in.kinds = room_for(2, 4);
  in.kinds[0].slots = 1;
  in.kinds[0].running = 1;
  in.kinds[0].busy = {{9, 40}};
  // The v100 claims it in 1 s; a new a6000 would claim it 5 s after its sbatch at best. Before, the
  // model had the running worker half way through its task (free in 5 s) and a new one start at
  // once, so it bought the a6000 (the task 5 s sooner for 1.2x its SU).
  auto p = plan_pool(ranked, 10, in);
  CHECK(p.submit.empty());
  CHECK(p.makespan_s == doctest::Approx(11));
  // The same v100 at the start of its task (free in 10 s) with two tasks waiting: new workers take
  // them (the second would wait 20 s), a v100 first.
  in.unfinished = 3;
  in.unclaimed = 2;
  in.kinds[0].busy = {{0, 40}};
  auto q = plan_pool(ranked, 10, in);
  REQUIRE_FALSE(q.submit.empty());
  CHECK(q.submit.front() == 0);
  CHECK(q.makespan_s < 30);
  // Its allocation has no room for another task: the waiting ones go to new workers.
  in.kinds[0].busy = {{9, 5}};
  auto r = plan_pool(ranked, 10, in);
  CHECK(r.submit.size() >= 1);
}

TEST_CASE("study: a strategy's free slots are its partition's free GPUs of its type, in workers")
{
  model::Cluster c;
  model::Node a;
  a.name = "a";
  a.partitions = {"gpu"};
  a.gpus = {{"a100", 4}};
  a.gpus_used = {{"a100", 1}};
  model::Node b = a;
  b.name = "b";
  b.gpus_used = {};
  model::Node down = a;
  down.name = "down";
  down.usable = false;
  model::Node other = a;
  other.name = "other";
  other.partitions = {"debug"};
  c.nodes = {a, b, down, other};
  auto s = strategy("s1", 0, 1.0);
  s.partition = "gpu";
  s.gpu_type = "a100";
  CHECK(free_slots(c, s) == 7);
  s.gpus_per_node = 2; // per node: a has 3 free (one worker), b 4 (two)
  CHECK(free_slots(c, s) == 3);
  s.gpus_per_node = 1;
  s.gpu_type = "h100";
  CHECK(free_slots(c, s) == 0);
  auto a100 = s;
  a100.gpu_type = "a100";
  const auto kinds = free_kinds(c, {s, a100});
  REQUIRE(kinds.size() == 2);
  CHECK(kinds[0].slots == 0);
  CHECK(kinds[1].slots == 7);
  CHECK(kinds[1].pending == 0);
}

TEST_CASE("study: workers are one node without checkpoint segments, long enough for a task")
{
  auto multi = strategy("s1", 0, 1.0);
  multi.nodes = 2;
  auto ckpt = strategy("s2", 0, 1.0);
  ckpt.kind = model::StrategyKind::checkpoint;
  auto short_one = strategy("s3", 0, 1.0, 300);
  auto ok = strategy("s4", 0, 1.0);
  std::vector<std::string> dropped;
  auto w = worker_strategies({multi, ckpt, short_one, ok}, 600, dropped);
  REQUIRE(w.size() == 1);
  CHECK(w[0].id == "s4");
  CHECK(dropped.size() == 3);
}

TEST_CASE("study: task states from the task directory and the workers alive")
{
  StudyFlags f;
  f.array = "0-5";
  auto s = make_study(f, "x {task}", 600);
  REQUIRE(s);
  const std::string listing = "0 1 101 1000 0 1010\n"    // done
                              "1 1 101 1010 3 1020\n"    // failed by its own status
                              "2 1 102 1000 -\n"         // running, its worker alive
                              "3 1 103 1000 -\n"         // its worker died: back in the queue
                              "4 1 103 1000 lost 1100\n" // lost once, ran again and died again:
                              "4 2 104 1200 -\n"         //   attempts used up
                              "garbage line\n";
  auto t = task_statuses(*s, listing, {"102"});
  REQUIRE(t.size() == 6);
  CHECK(t[0].state == TaskState::done);
  CHECK(t[0].ended_at - t[0].started_at == 10);
  CHECK(t[1].state == TaskState::failed);
  CHECK(t[1].exit_status == 3);
  CHECK(t[2].state == TaskState::running);
  CHECK(t[3].state == TaskState::pending);
  CHECK(t[3].attempts == 1);
  CHECK(t[4].state == TaskState::failed);
  CHECK(t[4].attempts == 2);
  CHECK(t[5].state == TaskState::pending);
  CHECK(t[5].attempts == 0);
  CHECK(claimer_jobs(listing) == std::set<std::string>{"101", "102", "103", "104"});
  auto c = count(t);
  CHECK(c.done == 1);
  CHECK(c.failed == 2);
  CHECK(c.running == 1);
  CHECK(c.pending == 2);

  // --retry-failed: a failed status with attempts left goes back to the queue.
  s->retry_failed = true;
  CHECK(task_statuses(*s, listing, {"102"})[1].state == TaskState::pending);
  // --retries 0: one death is the end.
  s->retry_failed = false;
  s->retries = 0;
  CHECK(task_statuses(*s, listing, {"102"})[3].state == TaskState::failed);
}

TEST_CASE("study: rv logs REQ/7 and REQ:7 name a task")
{
  CHECK(split_task_key("ab12cd34/7") == std::make_pair(std::string("ab12cd34"), 7));
  CHECK(split_task_key("ab12cd34:7") == std::make_pair(std::string("ab12cd34"), 7));
  CHECK_FALSE(split_task_key("ab12cd34"));
  CHECK_FALSE(split_task_key("ab12cd34/x"));
  CHECK_FALSE(split_task_key("/7"));
}

TEST_CASE("study: the workers' scripts kept in the record read back in rank order")
{
  nlohmann::json j = nlohmann::json::object();
  auto s1 = strategy("s1.w1", 0, 1.0);
  s1.label = "1x a100";
  add_worker_script(j, s1, "#!/bin/bash\necho one\n");
  add_worker_script(j, strategy("s1.w2", 0, 1.0), "another copy, not kept");
  add_worker_script(j, strategy("s2.w3", std::nullopt, 0.5), "#!/bin/bash\necho two\n");
  auto k = worker_kinds(j);
  REQUIRE(k.size() == 2);
  CHECK(k[0].strategy.id == "s1");
  CHECK(k[0].strategy.label == "1x a100");
  CHECK(k[0].script == "#!/bin/bash\necho one\n");
  CHECK(k[1].strategy.id == "s2");
  CHECK_FALSE(k[1].strategy.est_wait_s);
  CHECK(base_strategy_id("s12.w40") == "s12");
  CHECK(worker_kinds(nlohmann::json()).empty());
}

TEST_CASE("study: --prefer cost keeps to the cheapest GPUs that start, time buys a shorter study with dearer ones")
{
  CHECK(parse_prefer("") == Prefer::time);
  CHECK(parse_prefer("time") == Prefer::time);
  CHECK(parse_prefer("cost") == Prefer::cost);
  const auto bad = parse_prefer("cheap");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "--prefer cheap: not time or cost");
  CHECK_FALSE(bad.error().hint.empty());

  // The benchmark's study: 16 tasks of 10 s, workers of a minute; 2 free v100s and 6 free a6000s,
  // both starting at once, an a6000 task 1.25x a v100 one.
  const std::vector<model::Strategy> ranked = {strategy("v100", 0, 1.0, 60), strategy("a6000", 0, 1.25, 60)};
  PoolInput in;
  in.unfinished = 16;
  in.kinds = {KindPool{}, KindPool{}};
  in.kinds[0].slots = 2;
  in.kinds[1].slots = 6;
  in.su_weight = su_weight(Prefer::time);
  const auto fast = plan_pool(ranked, 10, in);
  CHECK(count_of(fast, 0) == 2);
  CHECK(count_of(fast, 1) > 0); // time: a6000 workers shorten the study enough to pay their SU
  in.su_weight = su_weight(Prefer::cost);
  const auto cheap = plan_pool(ranked, 10, in);
  CHECK(cheap.submit == std::vector<std::size_t>{0, 0}); // cost: the two v100s only
  CHECK(cheap.su < fast.su);
  CHECK(cheap.makespan_s > fast.makespan_s);

  // cost still takes a dearer GPU when the cheap one would make the study wait far longer.
  const std::vector<model::Strategy> late = {strategy("v100", 3600, 1.0, 60), strategy("a6000", 0, 1.25, 60)};
  const auto waited = plan_pool(late, 10, in);
  CHECK(count_of(waited, 1) > 0);

  // Kept in the record only when cost (a default study's record is as before), and read back.
  StudyFlags f;
  f.array = "0-1";
  f.prefer = "cost";
  auto st = make_study(f, "x", 10);
  REQUIRE(st);
  CHECK(to_json(*st).at("prefer") == "cost");
  auto back = study_from_json(to_json(*st));
  REQUIRE(back);
  CHECK(back->prefer == Prefer::cost);
  f.prefer.clear();
  auto plain = make_study(f, "x", 10);
  REQUIRE(plain);
  CHECK_FALSE(to_json(*plain).contains("prefer"));
  CHECK(study_from_json(to_json(*plain))->prefer == Prefer::time);
}
