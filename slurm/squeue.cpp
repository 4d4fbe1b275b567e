#include "slurm/squeue.hpp"

#include "core/duration.hpp"
#include "slurm/table.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <array>
#include <optional>
#include <utility>

namespace rv::slurm {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 24> codes{{
    {"BF", "BOOT_FAIL"}, {"CA", "CANCELLED"}, {"CD", "COMPLETED"},     {"CF", "CONFIGURING"},    {"CG", "COMPLETING"},
    {"DL", "DEADLINE"},  {"F", "FAILED"},     {"NF", "NODE_FAIL"},     {"OOM", "OUT_OF_MEMORY"}, {"PD", "PENDING"},
    {"PR", "PREEMPTED"}, {"R", "RUNNING"},    {"RD", "RESV_DEL_HOLD"}, {"RF", "REQUEUE_FED"},    {"RH", "REQUEUE_HOLD"},
    {"RQ", "REQUEUED"},  {"RS", "RESIZING"},  {"RV", "REVOKED"},       {"SI", "SIGNALING"},      {"SE", "SPECIAL_EXIT"},
    {"SO", "STAGE_OUT"}, {"ST", "STOPPED"},   {"S", "SUSPENDED"},      {"TO", "TIMEOUT"},
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

// An `-o` format: the letter of each field and the literal text that follows it up to the next
// field (`%.10i %20j|%T` -> {i," "}, {j,"|"}, {T,""}); `prefix` is literal text before the first.
struct Spec {
  char letter;
  std::string sep;
};
struct Format {
  std::string prefix;
  std::vector<Spec> specs;
};

Format parse_format(std::string_view format)
{
  Format out;
  auto p = format.find('%');
  out.prefix = format.substr(0, p);
  while (p != std::string_view::npos) {
    ++p; // the '%'
    while (p < format.size() && (format[p] == '.' || format[p] == '-' || (format[p] >= '0' && format[p] <= '9'))) {
      ++p;
    }
    char letter = p < format.size() ? format[p++] : '?';
    auto next = format.find('%', p);
    out.specs.push_back({letter, std::string(format.substr(p, next == std::string_view::npos ? next : next - p))});
    p = next;
  }
  return out;
}

bool is_blank_sep(std::string_view sep)
{
  return !sep.empty() && sep.find_first_not_of(" \t") == std::string_view::npos;
}

// Splits one line by the format's literal separators, left to right; a blank separator
// (`%.10i %20j`) matches any run of blanks, as squeue pads its columns. A last %j keeps the rest
// of the line (a name may hold the separator); another last field ends at the next separator.
// Nothing when the line has fewer fields than the format.
std::optional<std::vector<std::string_view>> split_by_format(std::string_view line, const Format& fmt)
{
  if (!fmt.prefix.empty() && line.starts_with(fmt.prefix)) {
    line.remove_prefix(fmt.prefix.size());
  }
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < fmt.specs.size(); ++i) {
    const bool last = i + 1 == fmt.specs.size();
    std::string_view sep = fmt.specs[i].sep;
    if (last && sep.empty() && i > 0) {
      sep = fmt.specs[i - 1].sep;
    }
    const bool blank = is_blank_sep(sep);
    if (blank) {
      auto start = line.find_first_not_of(" \t");
      line.remove_prefix(start == std::string_view::npos ? line.size() : start);
    }
    if (last && fmt.specs[i].letter == 'j') {
      out.push_back(line);
      break;
    }
    auto end = sep.empty() ? std::string_view::npos : blank ? line.find_first_of(" \t") : line.find(sep);
    if (end == std::string_view::npos) {
      if (!last) {
        return std::nullopt;
      }
      out.push_back(line);
      break;
    }
    out.push_back(line.substr(0, end));
    line.remove_prefix(end);
    if (blank) {
      auto rest = line.find_first_not_of(" \t");
      line.remove_prefix(rest == std::string_view::npos ? line.size() : rest);
    } else {
      line.remove_prefix(sep.size());
    }
  }
  return out;
}

// One line split by its format: `f[i]` holds the field of `fmt.specs[i]`.
Result<SqueueJob> from_fields(const std::vector<std::string_view>& f, const Format& fmt)
{
  SqueueJob j;
  for (std::size_t i = 0; i < fmt.specs.size() && i < f.size(); ++i) {
    auto v = text::trim(f[i]);
    switch (fmt.specs[i].letter) {
    case 'i':
    case 'A':
      j.job_id = v;
      break;
    case 'T':
    case 't':
      j.state = long_job_state(v);
      break;
    case 'r':
      j.reason = strip_parens(v);
      break;
    case 'R': // %R: the reason in parentheses while pending, else the nodes
      if (!v.empty() && v.front() == '(') {
        j.reason = strip_parens(v);
      } else if (!text::is_null(v)) {
        j.nodes = v;
      }
      break;
    case 'P':
      j.partition = v;
      break;
    case 'N':
    case 'Y':
      if (!text::is_null(v)) {
        j.nodes = v;
      }
      break;
    case 'D':
      j.node_count = text::to_int32(v).value_or(0);
      break;
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
    case 'l':
      j.time_limit_s = duration_cell(v);
      break;
    case 'M':
      j.elapsed_s = std::max<std::int64_t>(0, duration_cell(v));
      break;
    case 'b':
      j.tres_per_node = text::is_null(v) ? "" : std::string(v);
      break;
    case 'k':
      j.comment = text::is_null(v) ? "" : std::string(v);
      break;
    case 'u':
      j.user = v;
      break;
    case 'Q':
      j.priority = text::to_int(v).value_or(-1);
      break;
    case 'j':
      j.name = f[i];
      break; // blank separators are already cut off
    default:
      break;
    }
  }
  return j;
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
  return {"env",    "SLURM_TIME_FORMAT=standard",
          "squeue", "-h",
          "-t",     "all",
          "-j",     fmt::format("{}", fmt::join(job_ids, ",")),
          "-o",     std::string(squeue_format)};
}

std::vector<std::string> squeue_query_argv(std::string_view states, const std::vector<std::string>& partitions,
                                           const std::vector<std::string>& job_ids, std::string_view format)
{
  std::vector<std::string> argv = {"env", "SLURM_TIME_FORMAT=standard", "squeue", "-h", "-t", std::string(states)};
  if (!partitions.empty()) {
    argv.insert(argv.end(), {"-p", fmt::format("{}", fmt::join(partitions, ","))});
  }
  if (!job_ids.empty()) {
    argv.insert(argv.end(), {"-j", fmt::format("{}", fmt::join(job_ids, ","))});
  }
  argv.insert(argv.end(), {"-o", std::string(format)});
  return argv;
}

std::vector<std::string> user_jobs_argv(const std::string& user)
{
  std::vector<std::string> argv = {"env", "SLURM_TIME_FORMAT=standard", "squeue", "-h"};
  if (user.empty()) {
    argv.push_back("--me");
  } else {
    argv.insert(argv.end(), {"-u", user});
  }
  argv.insert(argv.end(), {"-o", std::string(squeue_format)});
  return argv;
}

std::vector<std::string> request_jobs_argv(std::string_view job_name)
{
  return {"squeue", "--me", "-h", "-t", "all", "-n", std::string(job_name), "-o", std::string(request_jobs_format)};
}

std::vector<std::string> my_jobs_argv()
{
  return {"squeue", "--me", "-h", "-o", std::string(request_jobs_format)};
}

int jobs_not_of(const std::vector<SqueueJob>& jobs, std::string_view request_id)
{
  const std::string own = "rv:" + std::string(request_id);
  return static_cast<int>(
      std::count_if(jobs.begin(), jobs.end(), [&](const SqueueJob& j) { return j.comment != own; }));
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
    auto fmt = parse_format(format);
    for (auto line : text::lines(input)) {
      auto f = split_by_format(line, fmt);
      if (!f || f->empty() || text::trim((*f)[0]).empty()) {
        continue; // not this format (or an empty line)
      }
      RV_TRY(j, from_fields(*f, fmt));
      out.push_back(std::move(j));
    }
    return out;
  }
  // A header-led table: read the columns rv knows by name (`-o` or `-O` headers).
  auto t = parse_table(input, "", {"JOBID"});
  auto col = [&](std::string_view name) { return column(t, name); };
  int id = col("JOBID"), st = col("ST") >= 0 ? col("ST") : col("STATE"), part = col("PARTITION"), name = col("NAME"),
      nodes = col("NODES"), start = col("START_TIME"), end = col("END_TIME"), sched = col("SCHEDNODES"),
      reason = col("NODELIST(REASON)"), tres = col("TRES_PER_NODE"), time = col("TIME"), limit = col("TIME_LIMIT"),
      nodelist = col("NODELIST"), why = col("REASON");
  if (reason < 0) {
    reason = col("NODELIST(R");
  }
  // A delimited row with more fields than the header: a free-text NAME held the delimiter.
  // Rejoin it there, so every later column stays in place (an OSC capture shows one).
  const bool delimited = input.find('\x1f') != std::string_view::npos || input.find('|') != std::string_view::npos;
  const std::string delim = input.find('\x1f') != std::string_view::npos ? "\x1f" : "|";
  for (auto& r : t.rows) {
    if (!delimited || name < 0 || r.size() <= t.header.size() || static_cast<std::size_t>(name) >= r.size()) {
      continue;
    }
    auto extra = r.size() - t.header.size();
    auto at = r.begin() + name;
    for (std::size_t k = 1; k <= extra; ++k) {
      *at += delim + *(at + static_cast<std::ptrdiff_t>(k));
    }
    r.erase(at + 1, at + 1 + static_cast<std::ptrdiff_t>(extra));
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
    if (auto e = parse_cluster_time(cell(end)); e) {
      j.end_time = *e;
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
    // `-O nodelist,reason` print them apart.
    if (j.nodes.empty() && !text::is_null(cell(nodelist))) {
      j.nodes = cell(nodelist);
    }
    if (j.reason.empty()) {
      j.reason = strip_parens(cell(why));
    }
    if (j.nodes.empty() && !text::is_null(cell(sched))) {
      j.nodes = cell(sched);
    }
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace rv::slurm
