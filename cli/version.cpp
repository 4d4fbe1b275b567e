#include "cli/commands.hpp"

#include "rv_commit.hpp"

#include <fmt/format.h>

namespace rv::cli {

std::string version_text()
{
  const std::string type = RV_BUILD_TYPE;
  return fmt::format("{} (commit {}, {} build)", RV_VERSION, RV_COMMIT, type.empty() ? "default" : type);
}

} // namespace rv::cli
