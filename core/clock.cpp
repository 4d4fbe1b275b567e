#include "core/clock.hpp"

#include "core/interrupt.hpp"

#include <thread>

namespace rv {

std::chrono::steady_clock::time_point SystemClock::now()
{
  return std::chrono::steady_clock::now();
}

std::int64_t SystemClock::epoch_seconds()
{
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void SystemClock::sleep_for(std::chrono::milliseconds d)
{
  const auto until = now() + d;
  while (now() < until && interrupt_signal() == 0) {
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now(), std::chrono::milliseconds(50)));
  }
}

} // namespace rv
