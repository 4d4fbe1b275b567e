// #12 "Idle GPUs are never ignored" when the fan-out width is what cut the strategy on them
// (strategy/queue_plan.hpp, cover_idle_gpus): it takes the last place of a strategy that starts on
// no idle GPUs, never the place of one that does (another idle window's), ids follow the rank.

#include "strategy/plan.hpp"
#include "strategy/queue_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace rv;
using namespace rv::strategy;

namespace {

model::Strategy strat(const std::string& id, const std::string& type, model::WindowSource source)
{
  model::Strategy s;
  s.id = id;
  s.gpu_type = type;
  s.partition = "gpu-" + type;
  s.label = type + " " + (source == model::WindowSource::none ? "direct" : "window");
  s.window_source = source;
  return s;
}

QueueWindow idle_on(const std::string& type, int gpus)
{
  QueueWindow w;
  w.gpu_type = type;
  w.partition = "gpu-" + type;
  w.idle_now = true;
  w.idle_gpus = gpus;
  w.walltime_s = 3600;
  w.why = "free until a reservation";
  return w;
}

bool noted(const Plan& p, const std::string& text)
{
  return std::any_of(p.notes.begin(), p.notes.end(), [&](const auto& n) { return n.find(text) != std::string::npos; });
}

} // namespace

TEST_CASE("cover_idle_gpus: the window strategy cut by the width takes the last place, and says so")
{
  Plan p;
  p.width = 2;
  p.strategies = {strat("s1", "a100", model::WindowSource::probe), strat("s2", "v100", model::WindowSource::probe)};
  p.pruned = {{strat("s3", "a6000", model::WindowSource::queue), "beyond the fan-out width of 2"}};
  p.queue_windows = {idle_on("a6000", 4)};
  model::JobRequest req;
  req.time_s = 86400;
  cover_idle_gpus(p, req);
  REQUIRE(p.strategies.size() == 2);
  CHECK(p.strategies[0].gpu_type == "a100");
  CHECK(p.strategies[1].gpu_type == "a6000");
  CHECK(p.strategies[1].id == "s2");
  REQUIRE(p.pruned.size() == 1);
  CHECK(p.pruned[0].strategy.gpu_type == "v100");
  CHECK(p.pruned[0].reason == "beyond the fan-out width of 2: its place went to a6000 window, which starts on idle "
                              "GPUs now");
  CHECK(noted(p, "4 a6000 GPUs idle now on gpu-a6000: s2 (a6000 window) starts on them now"));
}

TEST_CASE("cover_idle_gpus: two idle windows cut by the width: the second never evicts the first")
{
  Plan p;
  p.width = 2;
  p.strategies = {strat("s1", "a100", model::WindowSource::probe), strat("s2", "v100", model::WindowSource::probe)};
  p.pruned = {{strat("s3", "a6000", model::WindowSource::queue), "beyond the fan-out width of 2"},
              {strat("s4", "h200", model::WindowSource::probe_and_queue), "beyond the fan-out width of 2"}};
  p.queue_windows = {idle_on("a6000", 4), idle_on("h200", 8)};
  model::JobRequest req;
  req.time_s = 86400;
  cover_idle_gpus(p, req);
  REQUIRE(p.strategies.size() == 2);
  CHECK(p.strategies[0].gpu_type == "a6000"); // a100 gave its place second: v100 went first
  CHECK(p.strategies[1].gpu_type == "h200");
  CHECK(p.strategies[0].id == "s1");
  CHECK(p.strategies[1].id == "s2");
  CHECK(noted(p, "4 a6000 GPUs idle now on gpu-a6000: s1 (a6000 window) starts on them now"));
  CHECK(noted(p, "8 h200 GPUs idle now on gpu-h200: s2 (h200 window) starts on them now"));
  REQUIRE(p.pruned.size() == 2);
  CHECK(p.pruned[0].strategy.gpu_type == "v100");
  CHECK(p.pruned[1].strategy.gpu_type == "a100");
}

TEST_CASE("cover_idle_gpus: every kept strategy already starts on idle GPUs: a third window only gets a note")
{
  Plan p;
  p.width = 1;
  p.strategies = {strat("s1", "a6000", model::WindowSource::queue)};
  p.pruned = {{strat("s2", "h200", model::WindowSource::queue), "beyond the fan-out width of 1"}};
  p.queue_windows = {idle_on("a6000", 4), idle_on("h200", 8)};
  model::JobRequest req;
  req.time_s = 86400;
  cover_idle_gpus(p, req);
  REQUIRE(p.strategies.size() == 1);
  CHECK(p.strategies[0].gpu_type == "a6000");
  CHECK(noted(p, "8 h200 GPUs idle now on gpu-h200: h200 window not kept: beyond the fan-out width of 1"));
}
