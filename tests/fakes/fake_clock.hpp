#pragma once
// A clock for unit tests: sleeping advances time instantly.

#include "core/clock.hpp"

namespace rv::test {

class FakeClock final : public Clock {
public:
  explicit FakeClock(std::int64_t epoch = 1'800'000'000) : m_epoch_ms(epoch * 1000) {}
  std::chrono::steady_clock::time_point now() override
  {
    return std::chrono::steady_clock::time_point(std::chrono::milliseconds(m_epoch_ms));
  }
  std::int64_t epoch_seconds() override { return m_epoch_ms / 1000; }
  void sleep_for(std::chrono::milliseconds d) override
  {
    m_epoch_ms += d.count();
    m_slept_ms += d.count();
  }
  void advance(std::chrono::milliseconds d) { m_epoch_ms += d.count(); }
  std::int64_t slept_ms() const { return m_slept_ms; }

private:
  std::int64_t m_epoch_ms;
  std::int64_t m_slept_ms = 0;
};

} // namespace rv::test
