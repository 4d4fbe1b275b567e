#include "core/log.hpp"

#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

TEST_CASE("log: the config's log_level names a level, another name changes nothing")
{
  const auto before = spdlog::default_logger()->level();
  CHECK(rv::set_log_level("warn"));
  CHECK(spdlog::default_logger()->level() == spdlog::level::warn);
  CHECK(rv::set_log_level("trace"));
  CHECK(spdlog::default_logger()->level() == spdlog::level::trace);
  CHECK_FALSE(rv::set_log_level("loud")); // spdlog would read it as `off`
  CHECK_FALSE(rv::set_log_level("off"));
  CHECK(spdlog::default_logger()->level() == spdlog::level::trace);
  spdlog::default_logger()->set_level(before);
}
