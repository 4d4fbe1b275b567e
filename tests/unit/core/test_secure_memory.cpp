// rv init's password hygiene (core/secure_memory.hpp, N9).

#include "core/secure_memory.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

TEST_CASE("secure memory: a wiped string is zeroed and empty")
{
  std::string pw(40, 'p'); // on the heap
  const char* bytes = pw.data();
  rv::wipe(pw);
  CHECK(pw.empty());
  CHECK(std::string(bytes, 40) == std::string(40, '\0')); // the buffer is still the string's
}

// Before, rv init only unsetenv'd RV_INIT_PASSWORD: the bytes stayed where the environment had them
// (for a variable of the initial environment, what /proc/<pid>/environ shows for the whole run).
TEST_CASE("secure memory: scrub_env overwrites the value where it lies, then unsets it")
{
  ::setenv("RV_TEST_SCRUB_PW", "hunter2-hunter2", 1);
  char* value = std::getenv("RV_TEST_SCRUB_PW");
  REQUIRE(value != nullptr);
  rv::scrub_env("RV_TEST_SCRUB_PW");
  CHECK(std::getenv("RV_TEST_SCRUB_PW") == nullptr);
  CHECK(std::memchr(value, 'h', 15) == nullptr); // glibc keeps setenv's strings: still readable here
}

TEST_CASE("secure memory: forbid_core_dumps turns core dumps off (in a child, not the test runner)")
{
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    rlimit lim{};
    const bool ok = rv::forbid_core_dumps() && ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 &&
                    ::getrlimit(RLIMIT_CORE, &lim) == 0 && lim.rlim_cur == 0 && lim.rlim_max == 0;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
