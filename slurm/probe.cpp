#include "slurm/probe.hpp"

#include "core/process/shell.hpp"
#include "slurm/cluster_time.hpp"
#include "slurm/sbatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rv::slurm {
namespace {

// Single-quotes every word, also the ones shell_quote would leave bare.
std::string sq(std::string_view word)
{
  auto q = proc::shell_quote(word);
  return q.starts_with('\'') ? q : "'" + q + "'";
}

// The shell functions every probe script starts with (protocol: slurm/probe.hpp).
constexpr std::string_view k_prelude = R"SH(#!/bin/sh
# rv backfill probes (generated). Runs only `sbatch --test-only`: nothing is submitted.
LC_ALL=C
export LC_ALL
# Every wait counts from this one moment, so the order the probes ran in changes no wait.
rv_t0=$(date +%s)
# rv_probe ID WALLTIME_S SBATCH_ARGS...: one test-only call, its answer framed for rv;
# rv_ok=1 when it would start now (read here only to steer the bisection).
rv_probe() {
  rv_id=$1; rv_wall=$2; shift 2
  rv_min=$(( (rv_wall + 59) / 60 ))
  rv_out=$(SLURM_TIME_FORMAT=standard sbatch --test-only --time="$rv_min" "$@" 2>&1 </dev/null)
  rv_now=$(date +%s)
  echo "NOW $rv_t0 $(date +%z)"
  printf 'PROBE %s %s %s\n%s\n' "$rv_id" "$rv_wall" "${#rv_out}" "$rv_out"
  rv_ok=0
  rv_at=$(printf '%s\n' "$rv_out" | sed -n 's/.*to start at \([0-9][0-9-]*T[0-9:]*\).*/\1/p' | head -n 1)
  if [ -n "$rv_at" ]; then
    rv_start=$(date -d "$rv_at" +%s 2>/dev/null) || rv_start=
    if [ -n "$rv_start" ] && [ $((rv_start - rv_now)) -le "$RV_THRESHOLD" ]; then
      rv_ok=1
    fi
  fi
}
# rv_job ID FULL_S GRID_S... -- SBATCH_ARGS...: coarse pass up to the first walltime that does not
# start now, the full request (start estimate), then bisection of the cliff.
rv_job() {
  rv_j=$1; rv_full=$2; shift 2
  rv_grid=
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do rv_grid="$rv_grid $1"; shift; done
  shift
  rv_lo=0; rv_hi=0; rv_full_done=0
  for rv_w in $rv_grid; do
    rv_probe "$rv_j" "$rv_w" "$@"
    [ "$rv_w" = "$rv_full" ] && rv_full_done=1
    if [ "$rv_ok" = 1 ]; then rv_lo=$rv_w; else rv_hi=$rv_w; break; fi
  done
  if [ "$rv_full_done" = 0 ]; then
    rv_probe "$rv_j" "$rv_full" "$@"
  fi
  rv_n=0
  while [ "$rv_lo" -gt 0 ] && [ "$rv_hi" -gt 0 ] && [ $((rv_hi - rv_lo)) -gt "$RV_RESOLUTION" ] && [ "$rv_n" -lt "$RV_MAX_REFINE" ]; do
    rv_mid=$(( (rv_lo + rv_hi) / 2 / 60 * 60 ))
    rv_probe "$rv_j" "$rv_mid" "$@"
    if [ "$rv_ok" = 1 ]; then rv_lo=$rv_mid; else rv_hi=$rv_mid; fi
    rv_n=$((rv_n + 1))
  done
  echo "DONE $rv_j"
}
# rv_run_all: runs rv_j1..rv_j$RV_NJOBS, at most $RV_PAR at once, then prints their outputs in job
# order. Each lane claims the next unclaimed job by creating its claim file with noclobber
# (O_EXCL: exactly one lane wins it, no fork). Without a temp dir, one after another.
rv_run_all() {
  if [ "$RV_PAR" -le 1 ] || [ "$RV_NJOBS" -le 1 ] ||
    ! rv_tmp=$(mktemp -d "${TMPDIR:-/tmp}/rv-probe.XXXXXX" 2>/dev/null); then
    rv_i=1
    while [ "$rv_i" -le "$RV_NJOBS" ]; do "rv_j$rv_i"; rv_i=$((rv_i + 1)); done
    return
  fi
  trap 'rm -rf "$rv_tmp"' EXIT
  rv_l=0
  while [ "$rv_l" -lt "$RV_PAR" ] && [ "$rv_l" -lt "$RV_NJOBS" ]; do
    (
      set -C
      rv_i=1
      while [ "$rv_i" -le "$RV_NJOBS" ]; do
        if { true >"$rv_tmp/c$rv_i"; } 2>/dev/null; then "rv_j$rv_i" >"$rv_tmp/o$rv_i"; fi
        rv_i=$((rv_i + 1))
      done
    ) &
    rv_l=$((rv_l + 1))
  done
  wait
  rv_i=1
  while [ "$rv_i" -le "$RV_NJOBS" ]; do cat "$rv_tmp/o$rv_i" 2>/dev/null; rv_i=$((rv_i + 1)); done
}
)SH";

// Year 9999: no clock prints more; bounding NOW keeps start - NOW from overflowing.
constexpr std::int64_t k_max_epoch = 253'402'300'800;

bool parse_int(std::string_view s, std::int64_t& v)
{
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc{} && p == s.data() + s.size();
}

// Splits off the first space-separated word of `rest`.
std::string_view next_word(std::string_view& rest)
{
  auto sp = rest.find(' ');
  auto word = rest.substr(0, sp);
  rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
  return word;
}

// The first non-empty line of `text`, printable ASCII only, at most 300 characters.
std::string first_line(std::string_view text)
{
  std::string out;
  for (char ch : text) {
    if (ch == '\n' && !out.empty()) {
      break;
    }
    if (ch >= 0x20 && ch < 0x7f && out.size() < 300) {
      out += ch;
    }
  }
  return out;
}

// "Slurm would not schedule the job: Batch job submission failed: Invalid account" -> "Invalid
// account": Slurm's own reason, for one line in the plan.
std::string_view refusal_reason(std::string_view message)
{
  for (std::string_view prefix : {"Slurm would not schedule the job: ", "Batch job submission failed: "}) {
    if (message.starts_with(prefix)) {
      message.remove_prefix(prefix.size());
    }
  }
  return message;
}

} // namespace

std::vector<std::string> probe_args(const ProbeRequest& r)
{
  std::vector<std::string> args = {
      "--job-name=rv-probe",
      "--output=/dev/null",
      "--partition=" + r.partition,
      fmt::format("--nodes={}", r.nodes),
      "--ntasks-per-node=1",
      fmt::format("--cpus-per-task={}", r.cpus_per_task),
      fmt::format("--mem={}M", r.mem_mb_per_node),
      "--gres=" + r.gres,
  };
  if (!r.constraint.empty()) {
    args.push_back("--constraint=" + r.constraint);
  }
  if (!r.account.empty()) {
    args.push_back("--account=" + r.account);
  }
  if (!r.qos.empty()) {
    args.push_back("--qos=" + r.qos);
  }
  if (!r.exclude.empty()) {
    args.push_back("--exclude=" + r.exclude);
  }
  args.push_back("--wrap=true");
  return args;
}

std::string probe_script(const std::vector<ProbeJob>& jobs, const ProbePolicy& policy)
{
  std::string out(k_prelude);
  out += fmt::format("RV_THRESHOLD={}\nRV_RESOLUTION={}\nRV_MAX_REFINE={}\nRV_PAR={}\n", policy.now_threshold_s,
                     policy.resolution_s, policy.max_refinements, std::clamp(policy.concurrency, 1, k_max_concurrency));
  int n = 0;
  for (const auto& j : jobs) {
    if (j.grid_s.empty()) {
      continue;
    }
    std::string line = fmt::format("rv_j{}() {{ rv_job {} {}", ++n, sq(j.id), sq(std::to_string(j.grid_s.back())));
    for (auto w : j.grid_s) {
      line += ' ' + sq(std::to_string(w));
    }
    line += " --";
    for (const auto& a : probe_args(j.request)) {
      line += ' ' + sq(a);
    }
    out += line + "; }\n";
  }
  out += fmt::format("RV_NJOBS={}\nrv_run_all\n", n);
  return out;
}

ProbeOutput parse_probe_output(std::string_view output)
{
  ProbeOutput out;
  std::int64_t now = -1; // -1: no usable NOW line yet
  std::int64_t offset = 0;
  bool have_offset = false;
  while (!output.empty()) {
    auto nl = output.find('\n');
    auto line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view{} : output.substr(nl + 1);
    auto rest = line;
    auto tag = next_word(rest);
    if (tag == "NOW") {
      std::int64_t v = 0;
      now = parse_int(next_word(rest), v) && v >= 0 && v < k_max_epoch ? v : -1; // a clock's number only
      auto off = parse_utc_offset(next_word(rest));
      have_offset = off.has_value();
      offset = off.value_or(0);
      continue;
    }
    if (tag == "DONE") {
      out.done.emplace(next_word(rest));
      continue;
    }
    if (tag != "PROBE") {
      continue; // a login banner, a shell's noise
    }
    ProbeAnswer a;
    a.id = std::string(next_word(rest));
    std::int64_t n = -1;
    if (!parse_int(next_word(rest), a.walltime_s) || !parse_int(next_word(rest), n) || n < 0 ||
        static_cast<std::size_t>(n) > output.size()) {
      out.notes.push_back(fmt::format("a malformed probe record was skipped: {}", first_line(line)));
      continue;
    }
    const auto answer = output.substr(0, static_cast<std::size_t>(n));
    output.remove_prefix(static_cast<std::size_t>(n));
    if (output.starts_with('\n')) {
      output.remove_prefix(1);
    }
    auto estimate = parse_test_only(answer);
    if (estimate && now >= 0 && have_offset) {
      a.start_in_s = std::max<std::int64_t>(0, to_unix_seconds(estimate->start, offset) - now);
      a.message = first_line(answer);
    } else if (estimate) {
      a.message = "no NOW line with the login node's clock and zone: the start cannot be placed";
    } else {
      a.refused = estimate.error().code == ErrorCode::slurm_rejected;
      a.message = a.refused ? std::string(refusal_reason(estimate.error().message)) : first_line(answer);
      if (a.message.empty()) {
        a.message = "sbatch --test-only printed nothing";
      }
    }
    out.answers.push_back(std::move(a));
  }
  return out;
}

} // namespace rv::slurm
