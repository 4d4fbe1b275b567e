#include "app/env.hpp"

#include <ctime>

namespace rv::app {

std::string utc_iso(std::int64_t epoch)
{
  const auto t = static_cast<std::time_t>(epoch);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace rv::app
