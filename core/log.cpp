#include "core/log.hpp"

#include "core/printable.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <mutex>
#include <unistd.h>

namespace rv {
namespace {

struct Interlude {
  std::mutex lock;
  std::function<void()> before, after;
};

Interlude& interlude()
{
  static Interlude i;
  return i;
}

} // namespace

void set_log_interlude(std::function<void()> before, std::function<void()> after)
{
  auto& i = interlude();
  std::lock_guard<std::mutex> guard(i.lock);
  i.before = std::move(before);
  i.after = std::move(after);
}

PrintableSink::PrintableSink(std::shared_ptr<spdlog::sinks::sink> inner) : m_inner(std::move(inner)) {}

void PrintableSink::sink_it_(const spdlog::details::log_msg& msg)
{
  const std::string safe = printable(std::string_view(msg.payload.data(), msg.payload.size()));
  spdlog::details::log_msg copy(msg.time, msg.source, msg.logger_name, msg.level, safe);
  auto& i = interlude();
  std::lock_guard<std::mutex> guard(i.lock);
  if (i.before) {
    i.before();
  }
  m_inner->log(copy);
  m_inner->flush();
  if (i.after) {
    i.after();
  }
}

void PrintableSink::flush_()
{
  m_inner->flush();
}

void setup_logging(int verbosity, bool quiet)
{
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  const char* no_color = std::getenv("NO_COLOR");
  if ((no_color && *no_color) || !::isatty(2)) {
    sink->set_color_mode(spdlog::color_mode::never);
  }
  sink->set_pattern(verbosity > 0 ? "[%H:%M:%S.%e] %l: %v" : "rv: %^%l%$: %v");
  // Cluster strings and file names in messages cannot drive the terminal (core/printable.hpp).
  auto logger = std::make_shared<spdlog::logger>("rv", std::make_shared<PrintableSink>(sink));
  logger->set_level(quiet            ? spdlog::level::warn
                    : verbosity >= 2 ? spdlog::level::trace
                    : verbosity == 1 ? spdlog::level::debug
                                     : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

bool set_log_level(std::string_view name)
{
  const auto level = spdlog::level::from_str(std::string(name));
  if (name != "trace" && name != "debug" && name != "info" && name != "warn" && name != "error") {
    return false; // from_str maps every unknown name to `off`
  }
  spdlog::set_level(level);
  return true;
}

void silence_logging()
{
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("rv", std::make_shared<spdlog::sinks::null_sink_mt>()));
}

} // namespace rv
