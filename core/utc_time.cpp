#include "core/utc_time.hpp"

#include <fmt/format.h>

#include <chrono>

namespace rv {
namespace {

// The value of `n` digits at `text[at]`, or -1 when one of them is not a digit.
int digits(std::string_view text, std::size_t at, std::size_t n)
{
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') {
      return -1;
    }
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

} // namespace

std::string utc_iso(std::int64_t epoch)
{
  using namespace std::chrono;
  const sys_seconds t{seconds{epoch}};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), hms.hours().count(),
                     hms.minutes().count(), hms.seconds().count());
}

std::optional<std::int64_t> parse_utc_iso(std::string_view text)
{
  // YYYY-MM-DDTHH:MM:SSZ
  if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      text[19] != 'Z') {
    return std::nullopt;
  }
  const int y = digits(text, 0, 4);
  const int mo = digits(text, 5, 2);
  const int d = digits(text, 8, 2);
  const int h = digits(text, 11, 2);
  const int mi = digits(text, 14, 2);
  const int s = digits(text, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) {
    return std::nullopt;
  }
  using namespace std::chrono;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) {
    return std::nullopt;
  }
  const auto t = sys_days{ymd} + hours{h} + minutes{mi} + seconds{s};
  return static_cast<std::int64_t>(t.time_since_epoch().count());
}

} // namespace rv
