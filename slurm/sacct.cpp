#include "slurm/sacct.hpp"

#include "core/duration.hpp"
#include "slurm/gres.hpp"
#include "slurm/table.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::slurm {
namespace {

// The delimiter of `--parsable2` is '|' unless `--delimiter` chose another; sniff the common
// ones. "" means none: a fixed-width table (`sacct` without -P).
std::string sniff_delimiter(std::string_view text)
{
  for (std::string_view d : {"|", "\xe2\x98\x83" /* U+2603 snowman */, "\x1f"}) {
    if (text.find(d) != std::string_view::npos) {
      return std::string(d);
    }
  }
  return "";
}

bool is_step(std::string_view id)
{
  return id.find('.') != std::string_view::npos;
}

// A job id: digits, optionally `_task` or `_[range]` or `+offset` (het jobs).
bool looks_like_job_id(std::string_view id)
{
  return !id.empty() && id.front() >= '0' && id.front() <= '9';
}

} // namespace

std::vector<std::string> sacct_argv(const std::vector<std::string>& job_ids, std::string_view fields)
{
  return {"env",
          "SLURM_TIME_FORMAT=standard",
          "sacct",
          "--parsable2",
          "--noheader",
          "-j",
          fmt::format("{}", fmt::join(job_ids, ",")),
          "-o",
          std::string(fields)};
}

std::vector<std::string> recent_jobs_argv(const std::string& user)
{
  std::vector<std::string> argv = {
      "env", "SLURM_TIME_FORMAT=standard", "sacct", "--parsable2", "--noheader", "-X", "-S", "now-30days", "-E", "now"};
  if (!user.empty()) {
    argv.insert(argv.end(), {"-u", user});
  }
  argv.insert(argv.end(), {"-o", std::string(sacct_fields)});
  return argv;
}

Result<std::vector<SacctJob>> parse_sacct(std::string_view input)
{
  return parse_sacct(input, sacct_fields);
}

Result<std::vector<SacctJob>> parse_sacct(std::string_view input, std::string_view fields)
{
  auto delim = sniff_delimiter(input);
  std::vector<std::string> columns;
  for (auto f : text::split(fields, ",")) {
    columns.push_back(text::lower(f));
  }
  // Without a delimiter: a fixed-width table; rebuild it as '|' lines under its header.
  std::string rebuilt;
  if (delim.empty()) {
    auto t = parse_table(input, "", {"JOBID"});
    if (!t.header.empty()) {
      rebuilt = fmt::format("{}\n", fmt::join(t.header, "|"));
      for (const auto& r : t.rows) {
        rebuilt += fmt::format("{}\n", fmt::join(r, "|"));
      }
      input = rebuilt;
    }
    delim = "|";
  }
  std::vector<SacctJob> out;
  bool first = true;
  for (auto line : text::lines(input)) {
    if (text::trim(line).empty()) {
      continue;
    }
    auto f = text::split(line, delim);
    if (first) {
      first = false;
      // A header names the columns; JobID need not come first (`-o User,JobID,...`). A row of
      // rv's own order starts with a job id, whatever its JobName says.
      auto is_jobid = [](std::string_view h) { return text::lower(text::trim(h)) == "jobid"; };
      if (!looks_like_job_id(text::trim(f[0])) && std::any_of(f.begin(), f.end(), is_jobid)) {
        columns.clear();
        for (auto h : f) {
          columns.push_back(text::lower(text::trim(h)));
        }
        continue;
      }
    }
    auto get = [&](std::string_view name) -> std::string_view {
      for (std::size_t i = 0; i < columns.size() && i < f.size(); ++i) {
        if (columns[i] == name) {
          // JobName is last in rv's order: give it every remaining field.
          if (name == "jobname" && i + 1 == columns.size() && f.size() > columns.size()) {
            return line.substr(static_cast<std::size_t>(f[i].data() - line.data()));
          }
          return f[i];
        }
      }
      return {};
    };
    auto id = text::trim(get("jobid"));
    while (!id.empty() && id.back() == '+') { // cut by a column width: `2907783.ext+`
      id.remove_suffix(1);
    }
    if (!looks_like_job_id(id) || is_step(id) || id.find_first_of(" \t") != std::string_view::npos) {
      continue;
    }
    SacctJob j;
    j.job_id = id;
    j.state_detail = text::trim(get("state"));
    j.state = j.state_detail.substr(0, j.state_detail.find(' '));
    auto exit = text::trim(get("exitcode"));
    auto colon = exit.find(':');
    j.exit_status = text::to_int32(exit.substr(0, colon)).value_or(0);
    j.exit_signal = colon == std::string_view::npos ? 0 : text::to_int32(exit.substr(colon + 1)).value_or(0);
    auto elapsed = parse_slurm_time(text::trim(get("elapsed")));
    j.elapsed_s = elapsed && *elapsed > 0 ? *elapsed : 0;
    for (auto [key, slot] : {std::pair{"start", &j.start_time}, std::pair{"end", &j.end_time}}) {
      auto t = parse_cluster_time(get(key));
      if (!t) {
        return fail(ErrorCode::parse, fmt::format("sacct job {}: {}", j.job_id, t.error().message), t.error().hint);
      }
      *slot = *t;
    }
    auto nodes = text::trim(get("nodelist"));
    j.nodes = text::is_null(nodes) || nodes == "None assigned" ? "" : std::string(nodes);
    j.alloc_tres = text::trim(get("alloctres"));
    RV_TRY(gpus, parse_tres_gpus(j.alloc_tres));
    j.gpus = std::move(gpus);
    j.partition = text::trim(get("partition"));
    j.name = get("jobname");
    auto reason = text::trim(get("reason"));
    j.reason = text::is_null(reason) || reason == "None" ? "" : std::string(reason);
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace rv::slurm
