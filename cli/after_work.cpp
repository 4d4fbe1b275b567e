#include "cli/after_work.hpp"

#include "app/run/after_work.hpp"
#include "core/process/daemon.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace rv::cli {

Result<int> finish_in_background(RealEnv& real, Result<int> result)
{
  const char* off = std::getenv("RV_AFTER_WORK");
  if (!result || !app::has_after_work(real.env.after) || (off && std::string_view(off) == "0")) {
    return result;
  }
  // The log beside the cache, kept small: it only says what the background work could not do.
  const auto log = real.cache.dir().parent_path() / "after-work.log";
  std::error_code ec;
  std::filesystem::create_directories(log.parent_path(), ec);
  if (std::filesystem::file_size(log, ec) > 1024 * 1024 && !ec) {
    std::filesystem::remove(log, ec);
  }
  bool child_ready = false;
  auto d = proc::detach(log.string(), &child_ready);
  if (!d) {
    spdlog::debug("after-work: {}", d.error().message);
    return result;
  }
  if (d->child == 0) {
    proc::ready(*d);
    app::run_after_work(real.env, real.env.after);
    return result;
  }
  // The session is the child's now: leave without closing it (no SSH disconnect).
  std::fflush(nullptr);
  std::_Exit(*result);
}

} // namespace rv::cli
