#include "slurm/squeue.hpp"

#include "core/duration.hpp"
#include "slurm/table.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace rv::slurm {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 24> codes{{
    {"BF", "BOOT_FAIL"},   {"CA", "CANCELLED"},  {"CD", "COMPLETED"},    {"CF", "CONFIGURING"},
    {"CG", "COMPLETING"},  {"DL", "DEADLINE"},   {"F", "FAILED"},        {"NF", "NODE_FAIL"},
    {"OOM", "OUT_OF_MEMORY"}, {"PD", "PENDING"}, {"PR", "PREEMPTED"},    {"R", "RUNNING"},
    {"RD", "RESV_DEL_HOLD"}, {"RF", "REQUEUE_FED"}, {"RH", "REQUEUE_HOLD"}, {"RQ", "REQUEUED"},
    {"RS", "RESIZING"},    {"RV", "REVOKED"},    {"SI", "SIGNALING"},    {"SE", "SPECIAL_EXIT"},
    {"SO", "STAGE_OUT"},   {"ST", "STOPPED"},    {"S", "SUSPENDED"},     {"TO", "TIMEOUT"},
}};

std::string strip_parens(std::string_view s)
{
  s = text::trim(s);
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
    s = s.substr(1, s.size() - 2);
  }
  return text::is_null(s) || s == "None" ? std::string{} : std::string(s);
}

Result<std::optional<ClusterTime>> time_cell(std::string_view s, const std::string& id)
{
  auto t = parse_cluster_time(s);
  if (!t) {
    return fail(ErrorCode::parse, fmt::format("squeue job {}: {}", id, t.error().message), t.error().hint);
  }
  return t;
}

std::int64_t duration_cell(std::string_view s)
{
  auto d = parse_slurm_time(text::trim(s));
  return d ? *d : -1;
}

// One line of a '|' format: `letters[i]` names what field i holds.
Result<SqueueJob> from_fields(const std::vector<std::string_view>& f, const std::vector<char>& letters)
{
  SqueueJob j;
  for (std::size_t i = 0; i < letters.size() && i < f.size(); ++i) {
    auto v = text::trim(f[i]);
    switch (letters[i]) {
    case 'i': case 'A': j.job_id = v; break;
    case 'T': case 't': j.state = long_job_state(v); break;
    case 'r': j.reason = strip_parens(v); break;
    case 'R': // %R: the reason in parentheses while pending, else the nodes
      if (!v.empty() && v.front() == '(') {
        j.reason = strip_parens(v);
      } else if (!text::is_null(v)) {
        j.nodes = v;
      }
      break;
    case 'P': j.partition = v; break;
    case 'N': case 'Y':
      if (!text::is_null(v)) {
        j.nodes = v;
      }
      break;
    case 'D': j.node_count = text::to_int32(v).value_or(0); break;
    case 'S': {
      RV_TRY(t, time_cell(v, j.job_id));
      j.start_time = t;
      break;
    }
    case 'e': {
      RV_TRY(t, time_cell(v, j.job_id));
      j.end_time = t;
      break;
    }
    case 'l': j.time_limit_s = duration_cell(v); break;
    case 'M': j.elapsed_s = std::max<std::int64_t>(0, duration_cell(v)); break;
    case 'b': j.tres_per_node = text::is_null(v) ? "" : std::string(v); break;
    case 'k': j.comment = text::is_null(v) ? "" : std::string(v); break;
    case 'j': {
      std::string name(f[i]);
      for (auto k = i + 1; i + 1 == letters.size() && k < f.size(); ++k) { // the name held '|'
        name += "|";
        name += f[k];
      }
      j.name = std::move(name);
      break;
    }
    default: break;
    }
  }
  return j;
}

// `%.10i|%T|%20j` -> {'i', 'T', 'j'}.
std::vector<char> format_letters(std::string_view format)
{
  std::vector<char> out;
  for (auto spec : text::split(format, "|")) {
    while (!spec.empty() && (spec.front() == '%' || spec.front() == '.' || (spec.front() >= '0' && spec.front() <= '9'))) {
      spec.remove_prefix(1);
    }
    out.push_back(spec.empty() ? '?' : spec.front());
  }
  return out;
}

} // namespace

std::string long_job_state(std::string_view state)
{
  auto s = text::upper(text::trim(state));
  for (auto [code, name] : codes) {
    if (s == code) {
      return std::string(name);
    }
  }
  return s;
}

std::vector<std::string> squeue_argv(const std::vector<std::string>& job_ids)
{
  return {"env", "SLURM_TIME_FORMAT=standard", "squeue", "-h", "-t", "all", "-j",
          fmt::format("{}", fmt::join(job_ids, ",")), "-o", std::string(squeue_format)};
}

std::vector<std::string> request_jobs_argv(std::string_view job_name)
{
  return {"squeue", "--me", "-h", "-t", "all", "-n", std::string(job_name), "-o", std::string(request_jobs_format)};
}

Result<std::vector<SqueueJob>> request_jobs(std::string_view input, std::string_view request_id)
{
  RV_TRY(all, parse_squeue(input, request_jobs_format));
  const std::string want = "rv:" + std::string(request_id);
  std::erase_if(all, [&](const SqueueJob& j) { return j.comment != want; });
  return all;
}

Result<std::vector<SqueueJob>> parse_squeue(std::string_view input)
{
  return parse_squeue(input, squeue_format);
}

Result<std::vector<SqueueJob>> parse_squeue(std::string_view input, std::string_view format)
{
  std::vector<SqueueJob> out;
  auto first = text::trim(input.substr(0, input.find('\n')));
  if (first.find("JOBID") == std::string_view::npos) {
    auto letters = format_letters(format);
    for (auto line : text::lines(input)) {
      auto f = text::split(line, "|");
      if (f.size() < letters.size() || text::trim(f[0]).empty()) {
        continue; // not this format (or an empty line)
      }
      RV_TRY(j, from_fields(f, letters));
      out.push_back(std::move(j));
    }
    return out;
  }
  // A header-led table: read the columns rv knows by name.
  auto t = parse_table(input, "", {"JOBID"});
  auto col = [&](std::string_view name) { return column(t, name); };
  int id = col("JOBID"), st = col("ST") >= 0 ? col("ST") : col("STATE"), part = col("PARTITION"),
      name = col("NAME"), nodes = col("NODES"), start = col("START_TIME"), sched = col("SCHEDNODES"),
      reason = col("NODELIST(REASON)"), tres = col("TRES_PER_NODE"), time = col("TIME"), limit = col("TIME_LIMIT");
  if (reason < 0) {
    reason = col("NODELIST(R");
  }
  for (const auto& r : t.rows) {
    auto cell = [&](int c) -> std::string_view {
      if (c < 0 || static_cast<std::size_t>(c) >= r.size()) {
        return {};
      }
      return r[static_cast<std::size_t>(c)]; // a view of the row, never of a temporary
    };
    if (id < 0 || cell(id).empty()) {
      continue;
    }
    SqueueJob j;
    j.job_id = cell(id);
    j.state = long_job_state(cell(st));
    j.partition = cell(part);
    j.name = cell(name);
    j.node_count = text::to_int32(cell(nodes)).value_or(0);
    j.tres_per_node = text::is_null(cell(tres)) ? "" : std::string(cell(tres));
    j.elapsed_s = std::max<std::int64_t>(0, duration_cell(cell(time)));
    j.time_limit_s = duration_cell(cell(limit));
    if (auto s = parse_cluster_time(cell(start)); s) {
      j.start_time = *s; // a cut or relative time is left unknown
    }
    // NODELIST(REASON) is the last column: rejoin what blank splitting cut apart.
    std::string last;
    for (auto c = static_cast<std::size_t>(std::max(reason, 0)); reason >= 0 && c < r.size(); ++c) {
      last += last.empty() ? "" : " ";
      last += r[c];
    }
    if (!last.empty() && last.front() == '(') {
      j.reason = strip_parens(last);
    } else if (!text::is_null(last)) {
      j.nodes = last;
    }
    if (j.nodes.empty() && !text::is_null(cell(sched))) {
      j.nodes = cell(sched);
    }
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace rv::slurm
