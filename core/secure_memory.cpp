#include "core/secure_memory.hpp"
#include "core/platform/platform.hpp"

#include <cstdlib>
#include <cstring>
#include <sys/resource.h>

namespace rv {

void wipe(std::string& s)
{
  if (!s.empty()) {
    platform::secure_zero(s.data(), s.size());
  }
  s.clear();
}

bool forbid_core_dumps()
{
  const rlimit none{0, 0};
  const bool no_core = ::setrlimit(RLIMIT_CORE, &none) == 0;
  const bool not_dumpable = platform::forbid_inspection();
  return no_core && not_dumpable;
}

void scrub_env(const char* name)
{
  if (char* value = std::getenv(name)) {
    platform::secure_zero(value, std::strlen(value));
  }
  ::unsetenv(name);
}

} // namespace rv
