#pragma once
// Time as a seam: the race loop and anything that waits take a Clock&, so tests run instantly.

#include <chrono>
#include <cstdint>

namespace rv {

class Clock {
public:
  virtual ~Clock() = default;
  // Monotonic time, for intervals and deadlines.
  virtual std::chrono::steady_clock::time_point now() = 0;
  // Seconds since the Unix epoch (UTC), for comparing with Slurm's times.
  virtual std::int64_t epoch_seconds() = 0;
  // Waits `d`, returning early when an interrupt arrives.
  virtual void sleep_for(std::chrono::milliseconds d) = 0;
};

// The real clock; its sleep wakes up within 50 ms of an interrupt.
class SystemClock final : public Clock {
public:
  std::chrono::steady_clock::time_point now() override;
  std::int64_t epoch_seconds() override;
  void sleep_for(std::chrono::milliseconds d) override;
};

} // namespace rv
