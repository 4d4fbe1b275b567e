#include "app/run/plan/study.hpp"

#include "core/process/shell.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

namespace rv::app::study {
namespace {

constexpr const char* k_array_hint = "Slurm's syntax: 0-15, 1,3,8-10, 0-31:2 or 0-31%8 (at most 8 at once)";

std::optional<int> parse_int(std::string_view s)
{
  int v = 0;
  if (s.empty() || s.size() > 9) {
    return std::nullopt;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) {
    return std::nullopt;
  }
  return v;
}

bool is_identifier(std::string_view s)
{
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

Error array_error(std::string_view spec, std::string_view why)
{
  return {ErrorCode::usage, fmt::format("--array {}: {}", spec, why), k_array_hint};
}

} // namespace

Result<ArraySpec> parse_array_spec(std::string_view spec)
{
  ArraySpec out;
  std::string_view list = spec;
  if (auto pct = spec.find('%'); pct != std::string_view::npos) {
    auto k = parse_int(spec.substr(pct + 1));
    if (!k || *k < 1) {
      return std::unexpected(array_error(spec, "the cap after % must be a whole number of at least 1"));
    }
    out.max_running = *k;
    list = spec.substr(0, pct);
    if (list.empty()) {
      return out; // `%K` alone: a cap for a sweep
    }
  }
  std::set<int> ids;
  for (const auto part : text::split(list, ",")) {
    std::string_view p = part;
    if (p.empty()) {
      return std::unexpected(array_error(spec, "an empty element (two commas, or one at an end)"));
    }
    int step = 1;
    if (auto colon = p.find(':'); colon != std::string_view::npos) {
      auto s = parse_int(p.substr(colon + 1));
      if (!s || *s < 1) {
        return std::unexpected(array_error(spec, fmt::format("'{}': the step after : must be at least 1", part)));
      }
      step = *s;
      p = p.substr(0, colon);
    }
    auto dash = p.find('-');
    auto lo = parse_int(dash == std::string_view::npos ? p : p.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parse_int(p.substr(dash + 1));
    if (!lo || !hi) {
      return std::unexpected(array_error(spec, fmt::format("'{}' is not a task id or a range of them", part)));
    }
    if (*hi < *lo) {
      return std::unexpected(array_error(spec, fmt::format("'{}' ends before it starts", part)));
    }
    if ((*hi - *lo) / step + 1 + static_cast<long>(ids.size()) > k_max_tasks) {
      return std::unexpected(array_error(spec, fmt::format("more than {} tasks", k_max_tasks)));
    }
    for (int i = *lo; i <= *hi; i += step) {
      ids.insert(i);
    }
  }
  out.ids.assign(ids.begin(), ids.end());
  return out;
}

Result<SweepAxis> parse_sweep(std::string_view flag)
{
  const auto eq = flag.find('=');
  const std::string hint = "--sweep NAME=v1,v2,... (NAME: letters, digits and _), e.g. --sweep lr=1e-4,3e-4";
  if (eq == std::string_view::npos) {
    return fail(ErrorCode::usage, fmt::format("--sweep {}: no '='", flag), hint);
  }
  SweepAxis axis;
  axis.name = std::string(flag.substr(0, eq));
  if (!is_identifier(axis.name)) {
    return fail(ErrorCode::usage, fmt::format("--sweep {}: '{}' is not a parameter name", flag, axis.name), hint);
  }
  if (axis.name == "task") {
    return fail(ErrorCode::usage, fmt::format("--sweep {}: 'task' is the task id's own placeholder", flag),
                "name the parameter otherwise, e.g. --sweep seed=1,2,3");
  }
  for (const auto v : text::split(flag.substr(eq + 1), ",")) {
    if (v.empty()) {
      return fail(ErrorCode::usage, fmt::format("--sweep {}: an empty value", flag), hint);
    }
    axis.values.emplace_back(v);
  }
  return axis;
}

std::vector<Params> cartesian(const std::vector<SweepAxis>& axes)
{
  std::vector<Params> out{{}};
  for (const auto& axis : axes) {
    std::vector<Params> next;
    next.reserve(out.size() * axis.values.size());
    for (const auto& p : out) {
      for (const auto& v : axis.values) {
        auto q = p;
        q.emplace_back(axis.name, v);
        next.push_back(std::move(q));
      }
    }
    out = std::move(next);
  }
  return out;
}

Result<std::vector<Params>> parse_sweep_file(std::string_view json_text)
{
  const char* hint = "a JSON list of objects, e.g. [{\"lr\": 1e-4, \"model\": \"small\"}, {\"lr\": 3e-4, ...}]";
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded()) {
    return fail(ErrorCode::usage, "--sweep-file: not valid JSON", hint);
  }
  if (!j.is_array() || j.empty()) {
    return fail(ErrorCode::usage, "--sweep-file: not a non-empty JSON list", hint);
  }
  std::vector<Params> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_object()) {
      return fail(ErrorCode::usage, fmt::format("--sweep-file: element {} is not an object", i), hint);
    }
    Params p;
    for (const auto& [k, v] : j[i].items()) {
      if (!is_identifier(k) || k == "task") {
        return fail(ErrorCode::usage, fmt::format("--sweep-file: element {}: '{}' is not a parameter name", i, k),
                    "names are letters, digits and _, not 'task'");
      }
      auto text = param_text(v);
      if (!text) {
        return fail(ErrorCode::usage,
                    fmt::format("--sweep-file: element {}: '{}' is not a string, number or boolean", i, k), hint);
      }
      p.emplace_back(k, std::move(*text));
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<std::string> param_text(const nlohmann::json& value)
{
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_number() || value.is_boolean()) {
    return value.dump();
  }
  return std::nullopt;
}

Result<void> check_retries(int retries)
{
  if (retries < 0 || retries > 100) {
    return fail(ErrorCode::usage, fmt::format("--retries {}: out of range", retries),
                "0 to 100: how many times a task a dying worker dropped runs again");
  }
  return {};
}

std::string substitute(std::string_view line, int task_id, const Params& params)
{
  std::string out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const auto open = line.find('{', pos);
    if (open == std::string_view::npos) {
      break;
    }
    const auto close = line.find('}', open + 1);
    if (close == std::string_view::npos) {
      break;
    }
    const auto name = line.substr(open + 1, close - open - 1);
    std::optional<std::string> value;
    if (name == "task") {
      value = std::to_string(task_id);
    } else {
      for (const auto& [k, v] : params) {
        if (k == name) {
          value = v;
        }
      }
    }
    // `${NAME}` is the shell's own expansion: left alone.
    if (!value || (open > 0 && line[open - 1] == '$')) {
      out.append(line.substr(pos, open + 1 - pos));
      pos = open + 1;
      continue;
    }
    out.append(line.substr(pos, open - pos));
    out += proc::shell_quote(*value);
    pos = close + 1;
  }
  out.append(line.substr(std::min(pos, line.size())));
  return out;
}

std::string sweep_variable(std::string_view name)
{
  return "RV_SWEEP_" + text::upper(name);
}

Result<Prefer> parse_prefer(std::string_view word)
{
  if (word.empty() || word == "time") {
    return Prefer::time;
  }
  if (word == "cost") {
    return Prefer::cost;
  }
  return fail(ErrorCode::usage, fmt::format("--prefer {}: not time or cost", word),
              "time (the default): pricier GPUs that start sooner when they shorten the study; cost: the cheapest "
              "GPUs unless they would make it wait far longer");
}

const char* to_string(Prefer p)
{
  return p == Prefer::cost ? "cost" : "time";
}

double su_weight(Prefer p)
{
  return p == Prefer::cost ? k_su_weight_cost : k_su_weight;
}

Result<Study> make_study(const StudyFlags& flags, const std::string& line, std::int64_t task_time_s)
{
  Study s;
  s.retries = flags.retries;
  s.retry_failed = flags.retry_failed;
  RV_TRY(prefer, parse_prefer(flags.prefer));
  s.prefer = prefer;
  s.task_time_s = task_time_s;
  RV_TRY_VOID(check_retries(flags.retries));
  std::vector<SweepAxis> axes;
  for (const auto& f : flags.sweeps) {
    RV_TRY(axis, parse_sweep(f));
    for (const auto& a : axes) {
      if (sweep_variable(a.name) == sweep_variable(axis.name)) {
        return fail(ErrorCode::usage, fmt::format("--sweep {}: '{}' is swept twice", f, axis.name),
                    "give each parameter once: --sweep lr=1e-4,3e-4 (names differ in more than case)");
      }
    }
    axes.push_back(std::move(axis));
  }
  const bool sweep = !axes.empty() || !flags.sweep_file_text.empty();
  if (!axes.empty() && !flags.sweep_file_text.empty()) {
    return fail(ErrorCode::usage, "--sweep and --sweep-file together",
                "put every combination in the file, or give the axes with --sweep");
  }
  std::vector<Params> grid;
  if (!flags.array.empty()) {
    RV_TRY(spec, parse_array_spec(flags.array));
    s.max_running = spec.max_running;
    if (sweep && !spec.ids.empty()) {
      return fail(ErrorCode::usage, fmt::format("--array {} with a sweep", flags.array),
                  "a sweep numbers its tasks 0..N-1 itself; cap it with --array %K alone");
    }
    if (!sweep && spec.ids.empty()) {
      return fail(ErrorCode::usage, fmt::format("--array {}: no task ids", flags.array), k_array_hint);
    }
    for (int id : spec.ids) {
      grid.push_back({});
      s.tasks.push_back({id, {}, {}});
    }
  }
  if (sweep) {
    if (!flags.sweep_file_text.empty()) {
      auto parsed = parse_sweep_file(flags.sweep_file_text);
      if (!parsed) {
        auto e = parsed.error();
        e.message = flags.sweep_file + ": " + e.message;
        return std::unexpected(e);
      }
      grid = std::move(*parsed);
    } else {
      grid = cartesian(axes);
    }
    if (static_cast<int>(grid.size()) > k_max_tasks) {
      return fail(ErrorCode::usage, fmt::format("the sweep has {} tasks, more than {}", grid.size(), k_max_tasks),
                  "split it into several studies");
    }
    for (std::size_t i = 0; i < grid.size(); ++i) {
      s.tasks.push_back({static_cast<int>(i), grid[i], {}});
      for (const auto& [k, v] : grid[i]) {
        if (std::find(s.names.begin(), s.names.end(), k) == s.names.end()) {
          s.names.push_back(k);
        }
      }
    }
    std::set<std::string> vars;
    for (const auto& n : s.names) {
      if (!vars.insert(sweep_variable(n)).second) {
        return fail(ErrorCode::usage, fmt::format("sweep parameter '{}' differs from another only in case", n),
                    "RV_SWEEP_<NAME> is upper case: rename one of them");
      }
    }
  }
  if (s.tasks.empty()) {
    return fail(ErrorCode::usage, "the study has no tasks", "--array 0-15, --sweep NAME=v1,v2 or --sweep-file FILE");
  }
  for (auto& t : s.tasks) {
    t.command = substitute(line, t.id, t.params);
  }
  return s;
}

nlohmann::json to_json(const Study& s)
{
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : s.tasks) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& [k, v] : t.params) {
      params.push_back({k, v});
    }
    tasks.push_back({{"id", t.id}, {"params", params}, {"command", t.command}});
  }
  nlohmann::json j = {{"tasks", tasks},
                      {"names", s.names},
                      {"max_running", s.max_running},
                      {"retries", s.retries},
                      {"retry_failed", s.retry_failed},
                      {"task_time_s", s.task_time_s}};
  if (s.offers) {
    j["offers"] = true;
  }
  if (s.prefer != Prefer::time) {
    j["prefer"] = to_string(s.prefer);
  }
  return j;
}

Result<Study> study_from_json(const nlohmann::json& j)
{
  try {
    Study s;
    for (const auto& t : j.at("tasks")) {
      Task task;
      task.id = t.at("id").get<int>();
      task.command = t.at("command").get<std::string>();
      for (const auto& p : t.at("params")) {
        task.params.emplace_back(p.at(0).get<std::string>(), p.at(1).get<std::string>());
      }
      s.tasks.push_back(std::move(task));
    }
    s.names = j.at("names").get<std::vector<std::string>>();
    s.max_running = j.at("max_running").get<int>();
    s.retries = j.at("retries").get<int>();
    s.retry_failed = j.at("retry_failed").get<bool>();
    s.task_time_s = j.at("task_time_s").get<std::int64_t>();
    s.offers = j.value("offers", false);
    RV_TRY(prefer, parse_prefer(j.value("prefer", "time")));
    s.prefer = prefer;
    return s;
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::generic, fmt::format("the request's study record is unreadable: {}", e.what()));
  }
}

int tasks_per_worker(int tasks, int workers)
{
  if (workers <= 0 || tasks <= workers) {
    return 1;
  }
  return (tasks + workers - 1) / workers;
}

std::vector<model::Strategy> worker_strategies(const std::vector<model::Strategy>& ranked, std::int64_t task_time_s,
                                               std::vector<std::string>& dropped)
{
  std::vector<model::Strategy> out;
  for (const auto& s : ranked) {
    if (s.nodes > 1) {
      dropped.push_back(fmt::format("{} ({}): multi-node; a study's workers run on one node", s.id, s.label));
    } else if (s.kind == model::StrategyKind::checkpoint) {
      dropped.push_back(fmt::format("{} ({}): checkpoint segments; a task runs within one allocation", s.id, s.label));
    } else if (s.walltime_s < task_time_s || (s.time_min_s > 0 && s.time_min_s < task_time_s)) {
      dropped.push_back(fmt::format("{} ({}): its walltime may be shorter than a task's --time", s.id, s.label));
    } else {
      out.push_back(s);
    }
  }
  return out;
}

namespace {

// One worker in the pool's model of the study: free to claim at `at` (seconds from now), `cost`
// SU per task, `left` tasks before its allocation ends; then a replacement waits `regap` and holds
// `holds` tasks per allocation.
struct SimWorker {
  double at = 0;
  double cost = 0;
  int holds = 1;
  double regap = 0;
  int left = 1;
};

struct SimOutcome {
  double makespan = 0;
  double mean_end = 0; // the tasks' mean end: it still falls when a worker shortens no makespan
  double su = 0;
};

// The tasks shared out among `ws`, each to the worker free soonest (the cheaper one among equals):
// how long until the last ends and the SU of them.
SimOutcome simulate(std::vector<SimWorker> ws, int tasks, double task_s)
{
  SimOutcome out;
  if (tasks <= 0) {
    return out;
  }
  if (ws.empty()) {
    out.makespan = std::numeric_limits<double>::infinity();
    return out;
  }
  std::vector<double> at;
  for (const auto& w : ws) {
    at.push_back(w.at);
  }
  for (int t = 0; t < tasks; ++t) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < ws.size(); ++i) {
      if (at[i] < at[best] || (at[i] == at[best] && ws[i].cost < ws[best].cost)) {
        best = i;
      }
    }
    auto& w = ws[best];
    const double end = at[best] + task_s;
    out.makespan = std::max(out.makespan, end);
    out.mean_end += end / tasks;
    out.su += w.cost;
    at[best] = end;
    if (--w.left <= 0) { // its allocation is used up: a replacement takes its place
      at[best] += w.regap;
      w.left = std::max(1, w.holds);
    }
  }
  return out;
}

double pool_score(const SimOutcome& o, double su_floor, double weight)
{
  if (!std::isfinite(o.makespan)) {
    return std::numeric_limits<double>::infinity();
  }
  return std::log(std::max(1.0, (o.makespan + o.mean_end) / 2)) + weight * std::log(o.su + su_floor);
}

} // namespace

int free_slots(const model::Cluster& c, const model::Strategy& s)
{
  int gpus = 0;
  const int per = std::max(1, s.gpus_per_node);
  for (const auto& n : c.nodes) {
    if (!n.usable || std::find(n.partitions.begin(), n.partitions.end(), s.partition) == n.partitions.end()) {
      continue;
    }
    int total = 0, used = 0;
    for (const auto& g : n.gpus) {
      total += (s.gpu_type.empty() || g.type == s.gpu_type) ? g.count : 0;
    }
    for (const auto& g : n.gpus_used) {
      used += (s.gpu_type.empty() || g.type == s.gpu_type) ? g.count : 0;
    }
    gpus += std::max(0, total - used) / per * per;
  }
  return gpus / per;
}

std::vector<KindPool> free_kinds(const model::Cluster& c, const std::vector<model::Strategy>& strategies)
{
  std::vector<KindPool> out;
  for (const auto& s : strategies) {
    KindPool p;
    p.slots = free_slots(c, s);
    out.push_back(p);
  }
  return out;
}

PoolPlan pool_ceiling(const std::vector<model::Strategy>& ranked, const PoolInput& in)
{
  PoolPlan out;
  out.cancel.assign(ranked.size(), 0);
  int target = std::max(0, in.unfinished);
  auto cap = [&](std::optional<int> limit, std::string_view what) {
    if (!limit || *limit <= 0) {
      return;
    }
    const int room = std::max(0, *limit - in.headroom - in.other_jobs);
    if (room < target) {
      out.notes.push_back(fmt::format("{} {} less {} of your other job(s) and a headroom of {}: at most {} worker(s)",
                                      what, *limit, in.other_jobs, in.headroom, room));
      target = room;
    }
  };
  if (in.max_running > 0 && in.max_running < target) {
    out.notes.push_back(fmt::format("%{}: at most {} worker(s) at once", in.max_running, in.max_running));
    target = in.max_running;
  }
  cap(in.limits.max_submit_jobs, "MaxSubmitJobs");
  cap(in.limits.max_jobs, "MaxJobs");
  if (in.limits.max_gpus && !ranked.empty()) {
    const int per = std::max(1, ranked.front().gpus_per_node * ranked.front().nodes);
    cap(*in.limits.max_gpus / per, "GrpTRES gres/gpu (in workers)");
  }
  out.target = target;
  return out;
}

PoolPlan plan_pool(const std::vector<model::Strategy>& ranked, std::int64_t task_time_s, const PoolInput& in)
{
  PoolPlan out = pool_ceiling(ranked, in);
  const int target = out.target;
  if (ranked.empty() || in.unfinished <= 0) {
    return out;
  }
  // The model (docs/studies.md, "The pool"): a new worker of strategy k starts at its expected wait
  // (and its own start, k_worker_start_s) and claims tasks back to back, `holds` of them per
  // allocation (its walltime over a task's --time), a replacement waiting a top-up and the start
  // again after that; a running worker is free when its task ends (half way through one when the
  // top-up does not know), and holds what its allocation's time left allows. A strategy whose worker has pended past its wait and
  // a grace is late: it is expected to pend as long again (and at least a task more).
  // A task takes its --time, or what the study's ended tasks took (a worker claims the next while
  // its allocation has a task's --time left, so one that ends early leaves room for more).
  const double time_s = static_cast<double>(std::max<std::int64_t>(1, task_time_s));
  const double d = in.task_s > 0 ? std::min(in.task_s, time_s) : time_s;
  const double grace = std::max(30.0, d / 2);
  std::int64_t known_max = 0;
  for (const auto& s : ranked) {
    known_max = std::max(known_max, s.est_wait_s.value_or(0));
  }
  struct Kind {
    double start_new = 0;     // a new worker's expected start
    double start_pending = 0; // an existing pending worker's
    double cost = 0;          // SU per task
    int holds = 1;
    int room = 0; // new workers it may take now
  };
  std::vector<Kind> kinds(ranked.size());
  double max_cost = 0;
  for (std::size_t k = 0; k < ranked.size(); ++k) {
    const auto& s = ranked[k];
    const auto kp = k < in.kinds.size() ? in.kinds[k] : KindPool{};
    auto& kind = kinds[k];
    const double wait = static_cast<double>(s.est_wait_s ? *s.est_wait_s : known_max + task_time_s);
    const auto waited = static_cast<double>(std::max(kp.waited_s, kp.pending_for_s));
    const bool late = waited > wait + grace;
    const double expected = late ? waited + std::max(waited, d) : wait;
    kind.start_new = expected + k_worker_start_s; // its sbatch, scheduling and set-up too
    kind.start_pending = std::max(0.0, expected - static_cast<double>(kp.pending_for_s));
    kind.holds = 1 + static_cast<int>(std::max(0.0, static_cast<double>(s.walltime_s) - time_s) / d);
    kind.cost = s.est_su / kind.holds;
    max_cost = std::max(max_cost, kind.cost);
    kind.room = kp.slots > 0 ? std::max(0, kp.slots - kp.pending - kp.running) : 0;
    if (kp.pending == 0) {
      kind.room = std::max(kind.room, 1); // GPUs may have freed: one pending where none is
    }
  }
  const double su_floor = std::max(1e-6, 0.01 * max_cost) * std::max(1, in.unfinished);
  auto worker = [&](std::size_t k, double at) {
    return SimWorker{at, kinds[k].cost, kinds[k].holds, k_topup_s + kinds[k].start_new, kinds[k].holds};
  };
  // The pool is built again from its running workers: each step keeps one of a strategy's pending
  // workers or adds a new one, whichever lowers the score most (a kept one among equals: it has
  // waited already), while one does and the ceiling allows; pending workers not kept are cancelled.
  std::vector<SimWorker> pool;
  int pending_total = 0;
  std::vector<int> keepable(ranked.size(), 0);
  for (std::size_t k = 0; k < ranked.size() && k < in.kinds.size(); ++k) {
    const auto& busy = in.kinds[k].busy;
    const bool known = static_cast<int>(busy.size()) == in.kinds[k].running;
    for (int i = 0; i < in.kinds[k].running; ++i) {
      // Free once the task it runs ends (unknown: half way through one), then claiming while its
      // allocation holds a task's --time; replaced after that. A task that waits a moment for a
      // cheap worker about to free is not given a new, dearer worker that would start later.
      auto w = worker(k, d / 2);
      w.left = kinds[k].holds - 1;
      if (known) {
        const auto& b = busy[static_cast<std::size_t>(i)];
        w.at = b.task_ran_s >= 0 ? std::max(0.0, d - static_cast<double>(b.task_ran_s)) : 0.0;
        if (b.left_s >= 0) {
          const double room = static_cast<double>(b.left_s) - w.at;
          w.left = room >= time_s ? 1 + static_cast<int>((room - time_s) / d) : 0;
        }
      }
      if (w.left <= 0) {
        w.at += w.regap;
        w.left = kinds[k].holds;
      }
      pool.push_back(w);
    }
    keepable[k] = in.kinds[k].pending;
    pending_total += in.kinds[k].pending;
  }
  const int tasks = in.unclaimed >= 0 ? std::min(in.unclaimed, in.unfinished) : in.unfinished;
  auto run = [&](std::vector<SimWorker> ws) { return simulate(ws, tasks, d); };
  auto now = run(pool);
  double score = pool_score(now, su_floor, in.su_weight);
  int alive = std::max(0, in.workers_alive - pending_total);
  auto group_left = in.group_room;
  auto group_full = [&](std::size_t k) {
    if (group_left.empty() || k >= in.kinds.size()) {
      return false;
    }
    const auto g = static_cast<std::size_t>(in.kinds[k].group);
    return g >= group_left.size() || group_left[g] <= 0;
  };
  while (alive < target && tasks > 0) {
    std::size_t best = ranked.size();
    bool best_keeps = false;
    double best_score = score;
    SimOutcome best_outcome;
    for (std::size_t k = 0; k < ranked.size(); ++k) {
      for (const bool keep : {true, false}) {
        if ((keep ? keepable[k] <= 0 : kinds[k].room <= 0) || group_full(k)) {
          continue;
        }
        auto trial = pool;
        trial.push_back(worker(k, keep ? kinds[k].start_pending : kinds[k].start_new));
        const auto o = run(trial);
        const double sc = pool_score(o, su_floor, in.su_weight);
        if (sc < best_score - 1e-9) {
          best = k;
          best_keeps = keep;
          best_score = sc;
          best_outcome = o;
        }
      }
    }
    if (best == ranked.size()) {
      break;
    }
    pool.push_back(worker(best, best_keeps ? kinds[best].start_pending : kinds[best].start_new));
    if (best_keeps) {
      --keepable[best];
    } else {
      --kinds[best].room;
      out.submit.push_back(best);
    }
    if (!group_left.empty()) {
      --group_left[static_cast<std::size_t>(in.kinds[best].group)];
    }
    score = best_score;
    now = best_outcome;
    ++alive;
  }
  for (std::size_t k = 0; k < ranked.size(); ++k) {
    out.cancel[k] = keepable[k];
  }
  out.makespan_s = now.makespan;
  out.su = now.su;
  out.score = score;
  return out;
}

std::string base_strategy_id(std::string_view worker_id)
{
  const auto dot = worker_id.rfind(".w");
  return std::string(dot == std::string_view::npos ? worker_id : worker_id.substr(0, dot));
}

void add_worker_script(nlohmann::json& study_json, const model::Strategy& s, const std::string& script)
{
  auto& workers = study_json["workers"];
  if (!workers.is_array()) {
    workers = nlohmann::json::array();
  }
  const auto id = base_strategy_id(s.id);
  for (const auto& w : workers) {
    if (w.value("id", "") == id) {
      return;
    }
  }
  workers.push_back({{"id", id},
                     {"label", s.label},
                     {"partition", s.partition},
                     {"gpu_type", s.gpu_type},
                     {"nodes", s.nodes},
                     {"gpus_per_node", s.gpus_per_node},
                     {"walltime_s", s.walltime_s},
                     {"est_wait_s", s.est_wait_s ? nlohmann::json(*s.est_wait_s) : nlohmann::json()},
                     {"est_su", s.est_su},
                     {"script", script}});
}

std::vector<WorkerKind> worker_kinds(const nlohmann::json& study_json)
{
  std::vector<WorkerKind> out;
  if (!study_json.is_object() || !study_json.contains("workers") || !study_json["workers"].is_array()) {
    return out;
  }
  for (const auto& w : study_json["workers"]) {
    WorkerKind k;
    k.strategy.id = w.value("id", "");
    k.strategy.label = w.value("label", "");
    k.strategy.partition = w.value("partition", "");
    k.strategy.gpu_type = w.value("gpu_type", "");
    k.strategy.nodes = w.value("nodes", 1);
    k.strategy.gpus_per_node = w.value("gpus_per_node", 0);
    k.strategy.walltime_s = w.value("walltime_s", std::int64_t{0});
    if (auto e = w.find("est_wait_s"); e != w.end() && e->is_number_integer()) {
      k.strategy.est_wait_s = e->get<std::int64_t>();
    }
    k.strategy.est_su = w.value("est_su", 0.0);
    k.script = w.value("script", "");
    if (auto e = w.find("slots"); e != w.end() && e->is_number_integer()) {
      k.slots = e->get<int>();
    }
    if (!k.strategy.id.empty() && !k.script.empty()) {
      out.push_back(std::move(k));
    }
  }
  return out;
}

const char* to_string(TaskState s)
{
  switch (s) {
  case TaskState::pending:
    return "pending";
  case TaskState::running:
    return "running";
  case TaskState::done:
    return "done";
  case TaskState::failed:
    return "failed";
  case TaskState::lost:
    return "lost";
  }
  return "?";
}

std::string tasks_dir(const std::string& remote_root, const std::string& request_id)
{
  return remote_root + "/requests/" + request_id + "/tasks";
}

std::string task_log(const std::string& dir, int task, int attempt)
{
  return fmt::format("{}/{}/a{}/out", dir, task, attempt);
}

proc::Command task_listing_command(const std::string& dir)
{
  // One line per attempt directory; a missing file reads `-`. The directory may not exist yet
  // (no worker started): nothing is printed, and the exit is 0.
  static constexpr const char* k_script = R"sh(cd -- "$1" 2>/dev/null || exit 0
for a in */a*; do
  [ -d "$a" ] || continue
  t=${a%%/*}; k=${a#*/a}
  j=$(cat -- "$a/job" 2>/dev/null); s=$(cat -- "$a/start" 2>/dev/null); e=$(cat -- "$a/exit" 2>/dev/null)
  printf '%s %s %s %s %s\n' "$t" "$k" "${j:--}" "${s:--}" "${e:--}"
done
for o in */offer; do
  [ -d "$o" ] || continue
  k=$(cat -- "$o/attempt" 2>/dev/null)
  printf '%s offer %s\n' "${o%%/*}" "${k:--}"
done
for c in */.claim.*; do
  [ -f "$c/attempt" ] || continue
  printf '%s %s %s - -\n' "${c%%/*}" "$(cat -- "$c/attempt")" "${c##*/.claim.}"
done
)sh";
  proc::Command c;
  c.argv = {"sh", "-c", k_script, "sh", dir};
  return c;
}

proc::Command worker_marks_command(const std::string& dir)
{
  static constexpr const char* k_script = R"sh(cd -- "$1" 2>/dev/null || exit 0
for m in .started.* .ended.*; do
  [ -e "$m" ] || continue
  m=${m#.}
  printf '%s %s\n' "${m%%.*}" "${m#*.}"
done
)sh";
  proc::Command c;
  c.argv = {"sh", "-c", k_script, "sh", dir};
  return c;
}

WorkerMarks parse_worker_marks(std::string_view out)
{
  WorkerMarks m;
  m.read = true;
  std::istringstream in{std::string(out)};
  std::string word, job;
  while (in >> word >> job) {
    if (word == "started") {
      m.started.insert(job);
    } else if (word == "ended") {
      m.ended.insert(job);
    }
  }
  return m;
}

proc::Command worker_wait_command(const std::string& dir, int known, int seconds)
{
  static constexpr const char* k_script = R"sh(cd -- "$1" 2>/dev/null || exit 0
marks() { set -- .started.* .ended.*; n=0; for m; do [ -e "$m" ] && n=$(( n + 1 )); done; echo "$n"; }
i=0
while n=$(marks) && [ "$n" -le "$2" ] && [ "$i" -lt "$3" ]; do sleep 1; i=$(( i + 1 )); done
echo "$n"
)sh";
  proc::Command c;
  c.argv = {"sh", "-c", k_script, "sh", dir, std::to_string(known), std::to_string(seconds)};
  return c;
}

namespace {

struct Attempt {
  int n = 0;
  std::string job;
  std::int64_t start = 0;
  std::string exit; // "" = none yet; "lost"; a status
  std::int64_t end = 0;
};

std::int64_t to_i64(std::string_view s)
{
  std::int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

} // namespace

std::vector<TaskStatus> task_statuses(const Study& s, std::string_view listing, const std::set<std::string>& alive)
{
  std::map<int, std::map<int, Attempt>> by_task;
  std::istringstream in{std::string(listing)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string t, k, job, start, exit, end;
    if (!(w >> t >> k >> job >> start >> exit)) {
      continue;
    }
    w >> end; // the exit file holds "<status> <end>"
    auto ti = parse_int(t);
    auto ki = parse_int(k);
    if (!ti || !ki) {
      continue;
    }
    Attempt a{*ki, job == "-" ? "" : job, start == "-" ? 0 : to_i64(start), exit == "-" ? "" : exit, to_i64(end)};
    by_task[*ti][*ki] = a;
  }
  std::vector<TaskStatus> out;
  const int max_attempts = s.retries + 1;
  for (const auto& task : s.tasks) {
    TaskStatus st;
    st.id = task.id;
    auto it = by_task.find(task.id);
    if (it == by_task.end() || it->second.empty()) {
      out.push_back(st);
      continue;
    }
    const auto& last = it->second.rbegin()->second;
    st.attempts = last.n;
    st.job_id = last.job;
    st.started_at = last.start;
    st.ended_at = last.end;
    bool lost = last.exit == "lost";
    if (last.exit.empty()) {
      // No exit yet: running while its job lives (a claim whose job id is not written yet counts
      // as running: the claimer writes it next).
      lost = !last.job.empty() && !alive.contains(last.job);
      st.state = lost ? TaskState::lost : TaskState::running;
    } else if (!lost) {
      auto status = parse_int(last.exit);
      st.exit_status = status ? *status : 255;
      const bool ok = st.exit_status == 0;
      st.state =
          ok ? TaskState::done : (s.retry_failed && last.n < max_attempts ? TaskState::pending : TaskState::failed);
    }
    if (lost) {
      st.state = last.n < max_attempts ? TaskState::pending : TaskState::failed;
    }
    out.push_back(st);
  }
  return out;
}

std::set<std::string> claimer_jobs(std::string_view listing)
{
  std::set<std::string> out;
  std::istringstream in{std::string(listing)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string t, k, job;
    if ((w >> t >> k >> job) && job != "-" && k != "offer") {
      out.insert(job);
    }
  }
  return out;
}

std::map<int, int> open_offers(std::string_view listing)
{
  std::map<int, int> out;
  std::istringstream in{std::string(listing)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string t, word, k;
    if ((w >> t >> word >> k) && word == "offer") {
      auto ti = parse_int(t);
      auto ki = parse_int(k);
      if (ti && ki) {
        out[*ti] = *ki;
      }
    }
  }
  return out;
}

Counts count(const std::vector<TaskStatus>& tasks)
{
  Counts c;
  for (const auto& t : tasks) {
    switch (t.state) {
    case TaskState::done:
      ++c.done;
      break;
    case TaskState::running:
      ++c.running;
      break;
    case TaskState::failed:
      ++c.failed;
      break;
    case TaskState::pending:
    case TaskState::lost:
      ++c.pending;
      break;
    }
  }
  return c;
}

std::optional<std::pair<std::string, int>> split_task_key(std::string_view key)
{
  const auto sep = key.find_last_of("/:");
  if (sep == std::string_view::npos || sep == 0) {
    return std::nullopt;
  }
  auto task = parse_int(key.substr(sep + 1));
  if (!task) {
    return std::nullopt;
  }
  return std::make_pair(std::string(key.substr(0, sep)), *task);
}

} // namespace rv::app::study
