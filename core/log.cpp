#include "core/log.hpp"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <unistd.h>

namespace rv {

void setup_logging(int verbosity, bool quiet)
{
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  const char* no_color = std::getenv("NO_COLOR");
  if ((no_color && *no_color) || !::isatty(2)) {
    sink->set_color_mode(spdlog::color_mode::never);
  }
  auto logger = std::make_shared<spdlog::logger>("rv", sink);
  if (verbosity > 0) {
    logger->set_pattern("[%H:%M:%S.%e] %l: %v");
  } else {
    logger->set_pattern("rv: %^%l%$: %v");
  }
  logger->set_level(quiet ? spdlog::level::warn
                          : verbosity >= 2 ? spdlog::level::trace
                          : verbosity == 1 ? spdlog::level::debug
                                           : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void silence_logging()
{
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("rv", std::make_shared<spdlog::sinks::null_sink_mt>()));
}

} // namespace rv
