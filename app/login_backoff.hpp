#pragma once
// How a background rv (`rv _settle`, the background `rv forward`) meets a failed login. It has no
// terminal: a host that wants a second factor or a password refuses it every time (auth_failed,
// 254), and each try is a fresh login (a key offered, a keyboard-interactive abandoned) that
// fail2ban or sshguard may count. So after such a failure it waits minutes, not seconds (1, 2, 4,
// 8, then every 10 min) and gives up after k_max failures in a row (about 15 min), leaving the
// rest to a command run at a terminal (`rv ps`, `rv forward` again). security-review-3 S9.

#include "core/result.hpp"

#include <algorithm>
#include <chrono>

namespace rv::app {

class LoginBackoff {
public:
  using time_point = std::chrono::steady_clock::time_point;
  static constexpr int k_max = 5;
  static constexpr std::chrono::minutes k_first{1};
  static constexpr std::chrono::minutes k_longest{10};

  // Whether `e` is a failed login (one that a terminal would have been needed to answer).
  static bool is_login_failure(const Error& e) { return e.code == ErrorCode::auth_failed; }

  // Whether to try now: not before the wait after the last failed login is over.
  bool may_try(time_point now) const { return now >= m_next_try; }
  // One more failed login, at `now`: the wait before the next try.
  std::chrono::milliseconds failed(time_point now)
  {
    ++m_failures;
    const std::chrono::milliseconds wait = m_next;
    m_next = std::min<std::chrono::milliseconds>(m_next * 2, k_longest);
    m_next_try = now + wait;
    return wait;
  }
  // A try that logged in: the next failure waits k_first again.
  void succeeded()
  {
    m_failures = 0;
    m_next = k_first;
    m_next_try = {};
  }
  // k_max failures in a row: stop trying.
  bool exhausted() const { return m_failures >= k_max; }
  int failures() const { return m_failures; }
  time_point next_try() const { return m_next_try; }

private:
  int m_failures = 0;
  std::chrono::milliseconds m_next = k_first;
  time_point m_next_try{};
};

} // namespace rv::app
