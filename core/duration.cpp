#include "core/duration.hpp"

#include "core/checked.hpp"
#include "core/model/cluster.hpp"
#include "core/number.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

namespace rv {
namespace {

constexpr std::int64_t max_duration_s = 365 * 86400; // the one cap on every form of a user duration

bool parse_uint(std::string_view s, std::int64_t& out)
{
  if (s.empty()) {
    return false;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size() && out >= 0;
}

bool parse_decimal(std::string_view s, double& out)
{
  if (s.empty() || s.front() == '-' || s.front() == '+') {
    return false;
  }
  const auto v = text::parse_double(s);
  out = v.value_or(0);
  return v && std::isfinite(*v);
}

enum class ClockParse { ok, malformed, overflow };

// `[D-]HH:MM:SS`, `HH:MM:SS`, `MM:SS`, `D-HH`, `D-HH:MM` into seconds; overflow when the
// seconds do not fit int64.
ClockParse parse_clock(std::string_view s, std::int64_t& seconds)
{
  std::int64_t days = 0;
  bool has_days = false;
  if (auto dash = s.find('-'); dash != std::string_view::npos) {
    if (!parse_uint(s.substr(0, dash), days)) {
      return ClockParse::malformed;
    }
    has_days = true;
    s.remove_prefix(dash + 1);
  }
  std::vector<std::int64_t> parts;
  while (true) {
    auto colon = s.find(':');
    std::int64_t v = 0;
    if (!parse_uint(s.substr(0, colon), v)) {
      return ClockParse::malformed;
    }
    parts.push_back(v);
    if (colon == std::string_view::npos) {
      break;
    }
    s.remove_prefix(colon + 1);
  }
  if (parts.size() > 3) {
    return ClockParse::malformed;
  }
  std::int64_t h = 0, m = 0, sec = 0;
  if (has_days) { // D-HH, D-HH:MM, D-HH:MM:SS
    h = parts[0];
    m = parts.size() > 1 ? parts[1] : 0;
    sec = parts.size() > 2 ? parts[2] : 0;
  } else if (parts.size() == 3) {
    h = parts[0], m = parts[1], sec = parts[2];
  } else if (parts.size() == 2) { // MM:SS
    m = parts[0], sec = parts[1];
  } else { // minutes
    m = parts[0];
  }
  if ((parts.size() > 1 && (m > 59 || sec > 59))) {
    return ClockParse::malformed;
  }
  // ((days * 24 + h) * 60 + m) * 60 + sec, each step checked: the fields may hold any number.
  std::int64_t total = days;
  const std::pair<std::int64_t, std::int64_t> steps[] = {{24, h}, {60, m}, {60, sec}};
  for (const auto& [scale, plus] : steps) {
    auto next = checked_mul(total, scale);
    next = next ? checked_add(*next, plus) : next;
    if (!next) {
      return ClockParse::overflow;
    }
    total = *next;
  }
  seconds = total;
  return ClockParse::ok;
}

} // namespace

Result<std::int64_t> parse_duration(std::string_view text)
{
  const std::string shown(text);
  auto bad = [&] {
    return fail(ErrorCode::usage, fmt::format("invalid duration '{}'", shown),
                "use 30m, 2h, 1h30m, 1.5h, 2d12h, 2:59:00 or 1-12:00:00 (a bare number is minutes and MM:SS "
                "minutes:seconds, as in sbatch)");
  };
  if (text.empty()) {
    return bad();
  }
  auto too_long = [&] { return fail(ErrorCode::usage, fmt::format("duration '{}' is longer than a year", shown)); };
  std::int64_t seconds = 0;
  const char unit = text.back();
  if (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') {
    // One or more NUMBER UNIT parts, largest unit first, each unit once: 90m, 1.5h, 1h30m, 2d12h.
    double total = 0;
    int last_rank = 5;
    std::string_view rest = text;
    while (!rest.empty()) {
      std::size_t i = 0;
      while (i < rest.size() && ((rest[i] >= '0' && rest[i] <= '9') || rest[i] == '.')) {
        ++i;
      }
      if (i == 0 || i >= rest.size()) {
        return bad();
      }
      const char u = rest[i];
      const int rank = u == 'd' ? 4 : u == 'h' ? 3 : u == 'm' ? 2 : u == 's' ? 1 : 0;
      double value = 0;
      if (rank == 0 || rank >= last_rank || !parse_decimal(rest.substr(0, i), value)) {
        return bad();
      }
      const double scale = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : 86400;
      total += value * scale;
      if (total > static_cast<double>(max_duration_s)) {
        return too_long();
      }
      last_rank = rank;
      rest.remove_prefix(i + 1);
    }
    seconds = std::llround(total);
  } else {
    switch (parse_clock(text, seconds)) {
    case ClockParse::malformed:
      return bad();
    case ClockParse::overflow:
      return too_long();
    case ClockParse::ok:
      break;
    }
  }
  if (seconds > max_duration_s) {
    return too_long();
  }
  if (seconds <= 0) {
    return fail(ErrorCode::usage, fmt::format("duration '{}' must be positive", shown));
  }
  return seconds;
}

Result<std::int64_t> parse_slurm_time(std::string_view text)
{
  if (text.empty() || text == "UNLIMITED" || text == "INFINITE" || text == "N/A" || text == "NONE" ||
      text == "Partition_Limit" || text == "INVALID") {
    return -1;
  }
  std::int64_t seconds = 0;
  switch (parse_clock(text, seconds)) {
  case ClockParse::malformed:
    return fail(ErrorCode::parse, fmt::format("invalid Slurm time '{}'", text));
  case ClockParse::overflow:
    return fail(ErrorCode::parse, fmt::format("Slurm time '{}' is out of range", text));
  case ClockParse::ok:
    break;
  }
  return seconds;
}

std::string format_slurm_time(std::int64_t seconds)
{
  if (seconds < 0) {
    seconds = 0;
  }
  const auto days = seconds / 86400;
  const auto h = (seconds % 86400) / 3600;
  const auto m = (seconds % 3600) / 60;
  const auto s = seconds % 60;
  if (days > 0) {
    return fmt::format("{}-{:02}:{:02}:{:02}", days, h, m, s);
  }
  return fmt::format("{:02}:{:02}:{:02}", h, m, s);
}

std::string format_human_duration(std::int64_t seconds)
{
  if (seconds < 60) {
    return fmt::format("{}s", seconds);
  }
  if (seconds < 3600) {
    return fmt::format("{}m", seconds / 60);
  }
  if (seconds < 86400) {
    const auto m = (seconds % 3600) / 60;
    return m ? fmt::format("{}h{}m", seconds / 3600, m) : fmt::format("{}h", seconds / 3600);
  }
  const auto h = (seconds % 86400) / 3600;
  return h ? fmt::format("{}d{}h", seconds / 86400, h) : fmt::format("{}d", seconds / 86400);
}

std::string wait_in_words(std::optional<std::int64_t> seconds, std::int64_t now_s, bool cell)
{
  if (!seconds) {
    return cell ? "unknown" : "at an unknown time";
  }
  if (*seconds <= now_s) {
    return "now";
  }
  return (cell ? "~" : "in ~") + format_human_duration(*seconds);
}

Result<std::int64_t> parse_memory_mb(std::string_view text)
{
  const std::string shown(text);
  if (text.empty()) {
    return fail(ErrorCode::usage, "empty memory size", "use 200G or 512M");
  }
  double scale = 1; // MiB
  std::string_view number = text;
  switch (text.back()) {
  case 'K':
  case 'k':
    scale = 1.0 / 1024;
    number.remove_suffix(1);
    break;
  case 'M':
  case 'm':
    scale = 1;
    number.remove_suffix(1);
    break;
  case 'G':
  case 'g':
    scale = 1024;
    number.remove_suffix(1);
    break;
  case 'T':
  case 't':
    scale = 1024.0 * 1024;
    number.remove_suffix(1);
    break;
  default:
    break;
  }
  double value = 0;
  if (!parse_decimal(number, value)) {
    return fail(ErrorCode::usage, fmt::format("invalid memory size '{}'", shown), "use 200G or 512M");
  }
  if (value * scale > static_cast<double>(model::max_node_mem_mb)) { // before llround, which cannot hold 1e300
    return fail(ErrorCode::usage, fmt::format("memory size '{}' is more than 1024T", shown));
  }
  const auto mb = std::llround(value * scale);
  if (mb <= 0) {
    return fail(ErrorCode::usage, fmt::format("memory size '{}' must be positive", shown));
  }
  return mb;
}

} // namespace rv
