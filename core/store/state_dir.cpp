#include "core/store/state_dir.hpp"

#include <cstdlib>

namespace rv::store {

std::filesystem::path state_dir()
{
  if (const char* dir = std::getenv("RV_STATE_DIR"); dir && *dir) {
    return dir;
  }
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) {
    return std::filesystem::path(state) / "rv";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : ".") / ".local" / "state" / "rv";
}

} // namespace rv::store
