#pragma once
// A local file descriptor owned by one object and closed once.

#include <utility>

#include <unistd.h>

namespace rv {

class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : m_fd(fd) {}
  ~UniqueFd() { close(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept
  {
    if (this != &other) {
      close();
      m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
  }

  int get() const { return m_fd; }
  explicit operator bool() const { return m_fd >= 0; }
  // Closes now; whether close(2) succeeded (a write may only fail here).
  bool close() { return m_fd < 0 || ::close(std::exchange(m_fd, -1)) == 0; }

private:
  int m_fd = -1;
};

} // namespace rv
