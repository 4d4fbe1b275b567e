#pragma once
// Logging setup: everything to stderr, `rv: msg` by default, timestamps and logger names with -v.

#include <spdlog/sinks/base_sink.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace rv {

// A sink that writes each message through `inner` with its control characters escaped
// (printable()), so that a Slurm reason or a file name cannot drive the terminal.
class PrintableSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
  explicit PrintableSink(std::shared_ptr<spdlog::sinks::sink> inner);

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

private:
  std::shared_ptr<spdlog::sinks::sink> m_inner;
};

// Configures spdlog for the CLI: `verbosity` 0 = info, 1 = debug, 2+ = trace; `quiet` = warn.
// Honours NO_COLOR and non-TTY stderr.
void setup_logging(int verbosity, bool quiet);

// Lets a live status block on stderr step aside for log lines: `before` runs before each line
// the CLI's logger writes, `after` after it (both empty: nothing). The cli's output sets them
// while it shows a block (cli/context.hpp).
void set_log_interlude(std::function<void()> before, std::function<void()> after);

// Sets the stderr log level by name: trace, debug, info, warn or error (the config's `log_level`,
// which -v, -q and --json override); false for another name.
bool set_log_level(std::string_view name);

// Sends all logging to a null sink (unit tests).
void silence_logging();

} // namespace rv
