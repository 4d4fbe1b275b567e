#include "slurm/cluster_time.hpp"

#include "slurm/text.hpp"

#include <fmt/format.h>

namespace rv::slurm {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d)
{
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool digits(std::string_view s, int& out)
{
  auto v = text::to_int32(s);
  if (!v || *v < 0 || s.empty() || s.front() == '+' || s.front() == '-') {
    return false;
  }
  out = *v;
  return true;
}

} // namespace

Result<std::optional<ClusterTime>> parse_cluster_time(std::string_view s)
{
  s = text::trim(s);
  if (text::is_null(s) || s == "Unknown" || s == "NONE") {
    return std::optional<ClusterTime>{};
  }
  ClusterTime t;
  bool ok = s.size() == 19 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
            digits(s.substr(0, 4), t.year) && digits(s.substr(5, 2), t.month) && digits(s.substr(8, 2), t.day) &&
            digits(s.substr(11, 2), t.hour) && digits(s.substr(14, 2), t.minute) && digits(s.substr(17, 2), t.second);
  if (!ok || t.month < 1 || t.month > 12 || t.day < 1 || t.day > 31 || t.hour > 23 || t.minute > 59 || t.second > 60) {
    return fail(ErrorCode::parse, fmt::format("unexpected Slurm time '{}'", s),
                "rv expects YYYY-MM-DDTHH:MM:SS; is SLURM_TIME_FORMAT set on the cluster?");
  }
  return std::optional<ClusterTime>{t};
}

std::int64_t to_unix_seconds(const ClusterTime& t, std::int64_t utc_offset_s)
{
  auto days = days_from_civil(t.year, t.month, t.day);
  return days * 86400 + t.hour * 3600 + t.minute * 60 + t.second - utc_offset_s;
}

Result<std::int64_t> parse_utc_offset(std::string_view s)
{
  s = text::trim(s);
  std::string compact;
  if (s.size() == 6 && s[3] == ':') { // `+01:00`
    compact = fmt::format("{}{}", s.substr(0, 3), s.substr(4));
    s = compact;
  }
  int hh = 0, mm = 0;
  if (s.size() != 5 || (s[0] != '+' && s[0] != '-') || !digits(s.substr(1, 2), hh) || !digits(s.substr(3, 2), mm) ||
      mm > 59) {
    return fail(ErrorCode::parse, fmt::format("unexpected UTC offset '{}' (expected +HHMM)", s));
  }
  std::int64_t off = hh * 3600 + mm * 60;
  return s[0] == '-' ? -off : off;
}

std::string format_cluster_time(const ClusterTime& t)
{
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.year, t.month, t.day, t.hour, t.minute, t.second);
}

} // namespace rv::slurm
