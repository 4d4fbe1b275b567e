#include "strategy/probe_plan.hpp"

#include "core/process/shell.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

namespace rv::strategy {
namespace {

// Single-quotes every word, also the ones shell_quote would leave bare.
std::string sq(std::string_view word)
{
  auto q = proc::shell_quote(word);
  return q.starts_with('\'') ? q : "'" + q + "'";
}

// The shell functions every probe script starts with.
constexpr std::string_view k_prelude = R"SH(#!/bin/sh
# rv backfill probes (generated). Runs only `sbatch --test-only`: nothing is submitted.
# Prints NOW/PROBE/DONE lines; see strategy/probe_plan.hpp for the protocol.
# rv_probe CID WALLTIME_S SBATCH_ARGS...: one test-only call; rv_ok=1 when it would start now.
rv_probe() {
  rv_cid=$1; rv_wall=$2; shift 2
  rv_min=$(( (rv_wall + 59) / 60 ))
  rv_out=$(SLURM_TIME_FORMAT=standard sbatch --test-only --time="$rv_min" "$@" 2>&1 </dev/null)
  rv_now=$(date +%s)
  rv_at=$(printf '%s\n' "$rv_out" | sed -n 's/.*to start at \([0-9][0-9-]*T[0-9:]*\).*/\1/p' | head -n 1)
  rv_start=FAIL
  if [ -n "$rv_at" ]; then
    rv_start=$(date -d "$rv_at" +%s 2>/dev/null) || rv_start=FAIL
    [ -n "$rv_start" ] || rv_start=FAIL
  fi
  rv_msg=$(printf '%s' "$rv_out" | tr -c '[:print:]' ' ' | cut -c1-300)
  echo "NOW $rv_now"
  echo "PROBE $rv_cid $rv_wall $rv_start $rv_msg"
  rv_ok=0
  if [ "$rv_start" != FAIL ] && [ $((rv_start - rv_now)) -le "$RV_THRESHOLD" ]; then
    rv_ok=1
  fi
}
# rv_candidate CID FULL_S GRID_S... -- SBATCH_ARGS...: coarse pass up to the first walltime that
# does not start now, the full request (start estimate), then bisection of the cliff.
rv_candidate() {
  rv_c=$1; rv_full=$2; shift 2
  rv_grid=
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do rv_grid="$rv_grid $1"; shift; done
  shift
  rv_lo=0; rv_hi=0; rv_full_done=0
  for rv_w in $rv_grid; do
    rv_probe "$rv_c" "$rv_w" "$@"
    [ "$rv_w" = "$rv_full" ] && rv_full_done=1
    if [ "$rv_ok" = 1 ]; then rv_lo=$rv_w; else rv_hi=$rv_w; break; fi
  done
  if [ "$rv_full_done" = 0 ]; then
    rv_probe "$rv_c" "$rv_full" "$@"
  fi
  rv_n=0
  while [ "$rv_lo" -gt 0 ] && [ "$rv_hi" -gt 0 ] && [ $((rv_hi - rv_lo)) -gt "$RV_RESOLUTION" ] && [ "$rv_n" -lt 12 ]; do
    rv_mid=$(( (rv_lo + rv_hi) / 2 / 60 * 60 ))
    rv_probe "$rv_c" "$rv_mid" "$@"
    if [ "$rv_ok" = 1 ]; then rv_lo=$rv_mid; else rv_hi=$rv_mid; fi
    rv_n=$((rv_n + 1))
  done
  echo "DONE $rv_c"
}
)SH";

// Epochs and walltimes are never negative; refusing negatives also keeps `START - NOW` in range.
bool parse_int(std::string_view s, std::int64_t& v)
{
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc{} && p == s.data() + s.size() && v >= 0;
}

// Splits off the first space-separated word of `rest`.
std::string_view next_word(std::string_view& rest)
{
  auto sp = rest.find(' ');
  auto word = rest.substr(0, sp);
  rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
  return word;
}

void summarize(Window& w, const PlanOptions& opts)
{
  std::vector<ProbeResult> sorted = w.probes;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.walltime_s < b.walltime_s; });
  auto starts_now = [&](const ProbeResult& p) { return p.start_in_s && *p.start_in_s <= opts.now_threshold_s; };
  std::int64_t cliff = -1; // shortest walltime that does not start now
  for (const auto& p : sorted) {
    if (!starts_now(p)) {
      cliff = p.walltime_s;
      break;
    }
  }
  for (const auto& p : sorted) {
    if (starts_now(p) && (cliff < 0 || p.walltime_s < cliff) && p.walltime_s >= w.max_now_s) {
      w.max_now_s = p.walltime_s;
      w.now_start_in_s = p.start_in_s;
    }
  }
  bool non_monotonic = std::any_of(sorted.begin(), sorted.end(), [&](const auto& p) { return starts_now(p) && cliff >= 0 && p.walltime_s > cliff; });
  if (non_monotonic) {
    w.notes.push_back(fmt::format("non-monotonic probes: a walltime above {} s starts now; window kept at {} s", cliff, w.max_now_s));
  }
  for (const auto& p : w.probes) {
    if (p.walltime_s == w.full_walltime_s) {
      w.full_start_in_s = p.start_in_s;
      if (!p.start_in_s) {
        w.notes.push_back(fmt::format("no start estimate for {} s: {}", p.walltime_s, p.message.empty() ? "no answer" : p.message));
      }
    }
  }
  if (!w.complete) {
    w.notes.push_back("probing did not finish (cut off?)");
  }
}

} // namespace

std::vector<std::string> probe_args(const Candidate& c)
{
  std::vector<std::string> args = {
      "--job-name=rv-probe",
      "--output=/dev/null",
      "--partition=" + c.partition,
      fmt::format("--nodes={}", c.nodes),
      "--ntasks-per-node=1",
      fmt::format("--cpus-per-task={}", c.cpus_per_task),
      fmt::format("--mem={}M", c.mem_mb_per_node),
      "--gres=" + c.gres,
  };
  if (!c.constraint.empty()) {
    args.push_back("--constraint=" + c.constraint);
  }
  if (!c.account.empty()) {
    args.push_back("--account=" + c.account);
  }
  if (!c.qos.empty()) {
    args.push_back("--qos=" + c.qos);
  }
  if (!c.exclude.empty()) {
    args.push_back("--exclude=" + c.exclude);
  }
  args.push_back("--wrap=true");
  return args;
}

std::vector<std::int64_t> coarse_grid(const Candidate& c, const PlanOptions& opts)
{
  std::vector<std::int64_t> grid;
  for (auto w : opts.probe_grid) {
    if (w > 0 && w < c.probe_full_s) {
      grid.push_back(w);
    }
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  grid.push_back(c.probe_full_s);
  return grid;
}

std::string probe_script(const std::vector<Candidate>& candidates, const PlanOptions& opts)
{
  std::string out(k_prelude);
  out += fmt::format("RV_THRESHOLD={}\nRV_RESOLUTION={}\n", opts.now_threshold_s, opts.refine_resolution_s);
  for (const auto& c : candidates) {
    std::string line = fmt::format("rv_candidate {} {}", sq(c.id), sq(std::to_string(c.probe_full_s)));
    for (auto w : coarse_grid(c, opts)) {
      line += ' ' + sq(std::to_string(w));
    }
    line += " --";
    for (const auto& a : probe_args(c)) {
      line += ' ' + sq(a);
    }
    out += line + '\n';
  }
  return out;
}

const Window* Windows::find(const model::Shape& shape) const
{
  for (const auto& w : list) {
    if (w.shape() == shape) {
      return &w;
    }
  }
  return nullptr;
}

Windows parse_probe_output(std::string_view output, const std::vector<Candidate>& candidates, const PlanOptions& opts)
{
  std::map<std::string, Window> by_id;
  std::map<std::string, const Candidate*> cand;
  for (const auto& c : candidates) {
    cand.emplace(c.id, &c);
  }
  std::optional<std::int64_t> now;
  while (!output.empty()) {
    auto nl = output.find('\n');
    auto line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view{} : output.substr(nl + 1);
    auto rest = line;
    auto tag = next_word(rest);
    if (tag == "NOW") {
      std::int64_t v = 0;
      if (parse_int(next_word(rest), v)) {
        now = v;
      }
      continue;
    }
    if (tag != "PROBE" && tag != "DONE") {
      continue;
    }
    auto it = cand.find(std::string(next_word(rest)));
    if (it == cand.end()) {
      continue;
    }
    auto& w = by_id[it->first];
    if (w.candidate_id.empty()) {
      const auto& c = *it->second;
      w.candidate_id = c.id;
      w.shape() = c.shape();
      w.full_walltime_s = c.probe_full_s;
    }
    if (tag == "DONE") {
      w.complete = true;
      continue;
    }
    ProbeResult p;
    if (!parse_int(next_word(rest), p.walltime_s)) {
      continue;
    }
    auto start_field = next_word(rest);
    p.message = std::string(rest);
    std::int64_t epoch = 0;
    if (start_field != "FAIL" && parse_int(start_field, epoch) && now) {
      p.start_in_s = std::max<std::int64_t>(0, epoch - *now);
    } else if (start_field != "FAIL" && !now) {
      w.notes.push_back("a probe came without a NOW line; ignored");
      continue;
    }
    w.probes.push_back(std::move(p));
  }
  Windows out;
  for (const auto& c : candidates) {
    if (auto it = by_id.find(c.id); it != by_id.end()) {
      summarize(it->second, opts);
      out.list.push_back(std::move(it->second));
    }
  }
  return out;
}

} // namespace rv::strategy
