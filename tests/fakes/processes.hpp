#pragma once
// Runs a body in several forked processes at once, for tests of cross-process locking.

#include <doctest/doctest.h>

#include <functional>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace rv::test {

// Forks `n` children; child k runs `body(k)` and exits 0 if it returned true, 1 otherwise.
// Checks that every child exited 0.
inline void run_in_processes(int n, const std::function<bool(int)>& body)
{
  std::vector<pid_t> kids;
  for (int k = 0; k < n; ++k) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::_exit(body(k) ? 0 : 1);
    }
    REQUIRE(pid > 0);
    kids.push_back(pid);
  }
  for (auto pid : kids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

} // namespace rv::test
