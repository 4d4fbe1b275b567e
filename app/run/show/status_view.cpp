#include "app/run/show/status_view.hpp"

#include "core/printable.hpp"
#include "slurm/job_state.hpp"
#include "slurm/pending_reason.hpp"

#include <fmt/format.h>

namespace rv::app {
namespace {

bool is_pending(const JobRecord& j)
{
  return j.state == slurm::JobState::unknown || j.state == slurm::JobState::pending;
}

// What follows the state word: why it waits and when it may start, or where it runs.
std::string state_detail(const JobRecord& j)
{
  if (j.job_id.empty()) {
    return j.error.empty() ? "" : ": " + printable(j.error);
  }
  if (is_pending(j)) {
    const auto plain = slurm::plain_reason(j.reason);
    std::string d = ": " + printable(plain); // an unknown reason is shown as the cluster spelled it
    if (!j.reason.empty() && plain != j.reason) {
      d += " (" + printable(j.reason) + ")";
    }
    if (!j.start_estimate.empty()) {
      d += ", est. start " + printable(j.start_estimate);
    }
    return d;
  }
  const auto st = j.state;
  if (!j.node_list.empty() && (slurm::is_started(st) || !slurm::is_terminal(st))) {
    return " on " + printable(j.node_list);
  }
  return "";
}

std::string state_word(const JobRecord& j)
{
  if (j.job_id.empty()) {
    return "REFUSED";
  }
  return slurm::to_string(is_pending(j) ? slurm::JobState::pending : j.state);
}

// SGR colour of a state: pending yellow, started green, ended otherwise red.
const char* state_color(const JobRecord& j)
{
  if (j.job_id.empty()) {
    return "31";
  }
  const auto st = j.state;
  if (is_pending(j)) {
    return "33";
  }
  if (st == slurm::JobState::completed || (slurm::is_started(st) && !slurm::is_terminal(st))) {
    return "32";
  }
  return slurm::is_terminal(st) ? "31" : "33";
}

// `line` cut to `columns` visible columns: SGR sequences take none, a UTF-8 character one.
std::string cut(const std::string& line, int columns, bool color)
{
  int used = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b) { // an SGR sequence: ESC [ ... m
      while (i < line.size() && line[i] != 'm') {
        ++i;
      }
      continue;
    }
    if ((c & 0xC0) == 0x80) {
      continue; // a UTF-8 continuation byte
    }
    if (used == columns) {
      return line.substr(0, i) + (color ? "\x1b[0m" : "");
    }
    ++used;
  }
  return line;
}

} // namespace

std::string elapsed_text(std::int64_t seconds)
{
  if (seconds < 0) {
    seconds = 0;
  }
  if (seconds >= 3600) {
    return fmt::format("{}:{:02}:{:02}", seconds / 3600, (seconds % 3600) / 60, seconds % 60);
  }
  return fmt::format("{}:{:02}", seconds / 60, seconds % 60);
}

std::string job_state_text(const JobRecord& j)
{
  return state_word(j) + state_detail(j);
}

std::string job_status_key(const JobRecord& j)
{
  return fmt::format("{}|{}|{}|{}|{}", j.job_id, slurm::to_string(j.state), j.reason, j.start_estimate, j.node_list);
}

std::vector<std::string> status_block(const StatusView& view, std::int64_t now_epoch, bool color, int width)
{
  std::vector<std::string> lines;
  std::string title = "rv: " + view.title;
  if (view.since_epoch > 0) {
    title += color ? fmt::format(" \x1b[2m{}\x1b[0m", elapsed_text(now_epoch - view.since_epoch))
                   : " " + elapsed_text(now_epoch - view.since_epoch);
  }
  lines.push_back(std::move(title));
  for (const auto& j : view.jobs) {
    if (j.job_id.empty()) {
      continue;
    }
    const auto word = color ? fmt::format("\x1b[{}m{}\x1b[0m", state_color(j), state_word(j)) : state_word(j);
    lines.push_back(fmt::format("  {:<4} {:<8} {}{}{}", printable(j.strategy_id), printable(j.job_id), word,
                                state_detail(j), j.label.empty() ? "" : "  [" + printable(j.label) + "]"));
  }
  if (width > 1) {
    for (auto& l : lines) {
      l = cut(l, width - 1, color);
    }
  }
  return lines;
}

std::string job_status_line(const JobRecord& j, std::int64_t elapsed_s)
{
  return fmt::format("rv: {} (job {}): {} [{}]\n", printable(j.strategy_id), printable(j.job_id), job_state_text(j),
                     elapsed_text(elapsed_s));
}

std::string erase_block(std::size_t rows)
{
  // Up `rows` lines to the block's first column, then clear to the end of the screen.
  return rows == 0 ? std::string() : fmt::format("\r\x1b[{}A\x1b[J", rows);
}

std::string redraw_block(std::size_t rows, const std::vector<std::string>& lines)
{
  std::string out = erase_block(rows);
  if (lines.empty()) {
    return out;
  }
  out += "\x1b[?7l"; // no wrapping: a line longer than the window stays one row
  for (const auto& l : lines) {
    out += l + "\x1b[K\n";
  }
  return out + "\x1b[?7h";
}

std::string submitting_text(std::size_t strategies, const std::string& host)
{
  return fmt::format("submitting {} {} to {}", strategies, strategies == 1 ? "strategy" : "strategies", host);
}

nlohmann::json submitted_event(const RequestRecord& rec)
{
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& j : rec.jobs) {
    jobs.push_back({{"strategy", j.strategy_id},
                    {"job_id", j.job_id},
                    {"label", j.label},
                    {"partition", j.partition},
                    {"gpu_type", j.gpu_type},
                    {"nodes", j.nodes},
                    {"error", j.error}});
  }
  return {{"event", "submitted"}, {"request", rec.id}, {"name", rec.name}, {"host", rec.host}, {"jobs", jobs}};
}

nlohmann::json ended_event(const std::string& request_id, const FinalStatus& status, int exit_code)
{
  return {{"event", "ended"},
          {"request", request_id},
          {"job_id", status.job_id},
          {"state", slurm::to_string(status.state)},
          {"exit_code", exit_code},
          {"exit_status", status.exit_status},
          {"signal", status.exit_signal},
          {"run_time_s", status.run_time_s}};
}

nlohmann::json state_event(const std::string& request_id, const JobRecord& j, std::int64_t elapsed_s)
{
  nlohmann::json e = {{"event", "state"},
                      {"request", request_id},
                      {"strategy", j.strategy_id},
                      {"job_id", j.job_id},
                      {"state", slurm::to_string(is_pending(j) ? slurm::JobState::pending : j.state)},
                      {"elapsed_s", elapsed_s}};
  if (is_pending(j)) {
    e["reason"] = j.reason;
    e["reason_text"] = slurm::plain_reason(j.reason);
    e["start_estimate"] = j.start_estimate;
  }
  if (!j.node_list.empty()) {
    e["nodes"] = j.node_list;
  }
  return e;
}

} // namespace rv::app
