#include "app/request/steps.hpp"

#include "core/process/remote_files.hpp"
#include "core/text.hpp"
#include "slurm/jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rv::app {
namespace {

constexpr std::string_view k_step_prefix = "step-";

bool final_state(const std::string& state)
{
  return state == "done" || state == "failed" || state == "cancelled" || state == "ended";
}

} // namespace

nlohmann::json to_json(const StepRecord& s)
{
  return {{"n", s.n},
          {"job_id", s.job_id},
          {"name", s.name},
          {"command", s.command},
          {"workdir", s.workdir},
          {"log_base", s.log_base},
          {"nodes", s.nodes},
          {"created_at", s.created_at},
          {"state", s.state},
          {"exit_code", s.exit_code ? nlohmann::json(*s.exit_code) : nlohmann::json(nullptr)}};
}

std::vector<StepRecord> steps_of(const nlohmann::json& record)
{
  std::vector<StepRecord> steps;
  auto it = record.find("steps");
  if (it == record.end() || !it->is_object()) {
    return steps;
  }
  for (const auto& [key, j] : it->items()) {
    try {
      StepRecord s;
      s.n = j.at("n").get<int>();
      s.job_id = j.value("job_id", "");
      s.name = j.value("name", "");
      s.command = j.value("command", "");
      s.workdir = j.value("workdir", "");
      s.log_base = j.value("log_base", "");
      s.nodes = j.value("nodes", 1);
      s.created_at = j.value("created_at", "");
      s.state = j.value("state", "");
      if (auto e = j.find("exit_code"); e != j.end() && e->is_number_integer()) {
        s.exit_code = e->get<int>();
      }
      steps.push_back(std::move(s));
    } catch (const nlohmann::json::exception&) {
      continue; // a hand-edited entry: the others still show
    }
  }
  std::sort(steps.begin(), steps.end(), [](const StepRecord& a, const StepRecord& b) { return a.n < b.n; });
  return steps;
}

Result<std::optional<StepRef>> parse_step_ref(std::string_view key)
{
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) {
    return std::optional<StepRef>();
  }
  const auto bad = [&] {
    return fail(ErrorCode::usage, fmt::format("'{}' names no step", key),
                "a step is REQUEST/step-N, e.g. 3f9c02ab/step-2 (`rv ps REQUEST` lists its steps); a study's "
                "task is REQUEST/N");
  };
  const auto req = key.substr(0, slash);
  auto rest = key.substr(slash + 1);
  if (!req.empty() && !rest.empty() && rest.find_first_not_of("0123456789") == std::string_view::npos) {
    return std::optional<StepRef>(); // REQUEST/7: a study's task (docs/studies.md), not a step
  }
  if (req.empty() || !rest.starts_with(k_step_prefix)) {
    return bad();
  }
  rest.remove_prefix(k_step_prefix.size());
  int n = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  if (rest.empty() || ec != std::errc{} || end != rest.data() + rest.size() || n <= 0) {
    return bad();
  }
  return std::optional<StepRef>(StepRef{std::string(req), n});
}

std::string step_ref(const std::string& request_id, int n)
{
  return fmt::format("{}/{}{}", request_id, k_step_prefix, n);
}

std::string step_name(const std::string& request_name, int n)
{
  return fmt::format("{}.{}{}", request_name, k_step_prefix, n);
}

Result<StepRecord> add_step(store::RecordStore& store, const std::string& id, StepRecord step)
{
  RV_TRY(written, store.update(id, [&](nlohmann::json& rec) {
    auto& steps = rec["steps"];
    if (!steps.is_object()) {
      steps = nlohmann::json::object();
    }
    int last = rec.value("steps_started", 0);
    for (const auto& s : steps_of(rec)) {
      last = std::max(last, s.n);
    }
    step.n = last + 1;
    step.name = step_name(step.name, step.n);
    step.log_base = step_name(step.log_base, step.n);
    rec["steps_started"] = step.n; // a number is never given twice, even after a record is pruned
    steps[std::to_string(step.n)] = to_json(step);
  }));
  (void)written;
  return step;
}

Result<void> end_step(store::RecordStore& store, const std::string& id, int n, const std::string& state,
                      std::optional<int> exit_code)
{
  RV_TRY(written, store.update(id, [&](nlohmann::json& rec) {
    auto steps = rec.find("steps");
    if (steps == rec.end() || !steps->is_object() || !steps->contains(std::to_string(n))) {
      return;
    }
    auto& s = (*steps)[std::to_string(n)];
    if (final_state(s.value("state", ""))) {
      return;
    }
    s["state"] = state;
    s["exit_code"] = exit_code ? nlohmann::json(*exit_code) : nlohmann::json(nullptr);
  }));
  (void)written;
  return {};
}

Result<StepRecord> find_step(const store::RecordStore& store, const std::string& id, int n)
{
  RV_TRY(rec, store.read(id));
  auto steps = steps_of(rec);
  for (auto& s : steps) {
    if (s.n == n) {
      return s;
    }
  }
  std::vector<std::string> names;
  for (const auto& s : steps) {
    names.push_back(step_ref(id, s.n));
  }
  return fail(ErrorCode::usage, fmt::format("request {} has no step-{}", id, n),
              names.empty() ? fmt::format("it ran no `rv run --in {}` command", id)
                            : "its steps: " + text::join(names, ", "));
}

std::string step_log_path(const StepRecord& s, bool err, int node)
{
  const char* ext = err ? ".err" : ".out";
  return s.nodes > 1 ? fmt::format("{}.node{}{}", s.log_base, std::max(0, node), ext) : s.log_base + ext;
}

std::string step_status_path(const StepRecord& s)
{
  return s.nodes > 1 ? s.log_base + ".node0.status" : s.log_base + ".status";
}

Result<std::optional<int>> read_step_status(proc::Runner& runner, const StepRecord& s)
{
  RV_TRY(o, runner.run(proc::remote::read_command(step_status_path(s))));
  const auto t = text::trim(o.out);
  int code = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), code);
  if (o.status() != 0 || t.empty() || ec != std::errc{} || end != t.data() + t.size()) {
    return std::optional<int>();
  }
  return std::optional<int>(code);
}

const slurm::JobStep* live_step(const StepRecord& s, const std::vector<slurm::JobStep>& live)
{
  auto it = std::find_if(live.begin(), live.end(),
                         [&](const slurm::JobStep& l) { return l.job_id == s.job_id && l.name == s.name; });
  return it == live.end() ? nullptr : &*it;
}

Result<std::vector<slurm::JobStep>> job_steps(proc::Runner& runner, const std::string& job_id)
{
  RV_TRY(o, runner.run(slurm::command(slurm::steps_argv(job_id))));
  if (o.status() != 0) {
    // squeue forgets a job soon after it ends: no job, no running step.
    if (o.err.find("Invalid job id") != std::string::npos) {
      return std::vector<slurm::JobStep>{};
    }
    return fail(ErrorCode::slurm_rejected,
                fmt::format("squeue --steps -j {}: {}", job_id, text::first_line(o.err.empty() ? o.out : o.err)));
  }
  return slurm::parse_steps(o.out);
}

Result<bool> cancel_step(proc::Runner& runner, const StepRecord& s)
{
  RV_TRY(live, job_steps(runner, s.job_id));
  const auto* step = live_step(s, live);
  if (!step) {
    return false;
  }
  auto c = slurm::patient_command(slurm::cancel_step_argv(step->job_id, step->step_id));
  c.uninterruptible = true; // Ctrl-C stops the step: this scancel is what does it
  RV_TRY(o, runner.run(c));
  if (o.status() != 0) {
    return fail(ErrorCode::slurm_rejected, fmt::format("scancel {}.{}: {}", step->job_id, step->step_id,
                                                       text::first_line(o.err.empty() ? o.out : o.err)));
  }
  return true;
}

} // namespace rv::app
