#include "core/secure_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace rv {

void wipe(std::string& s)
{
  if (!s.empty()) {
    ::explicit_bzero(s.data(), s.size());
  }
  s.clear();
}

bool forbid_core_dumps()
{
  const rlimit none{0, 0};
  const bool no_core = ::setrlimit(RLIMIT_CORE, &none) == 0;
  const bool not_dumpable = ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
  return no_core && not_dumpable;
}

void scrub_env(const char* name)
{
  if (char* value = std::getenv(name)) {
    ::explicit_bzero(value, std::strlen(value));
  }
  ::unsetenv(name);
}

} // namespace rv
