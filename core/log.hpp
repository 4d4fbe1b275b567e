#pragma once
// Logging setup: everything to stderr, `rv: msg` by default, timestamps and logger names with -v.

#include <string>

namespace rv {

// Configures spdlog for the CLI: `verbosity` 0 = info, 1 = debug, 2+ = trace; `quiet` = warn.
// Honours NO_COLOR and non-TTY stderr.
void setup_logging(int verbosity, bool quiet);

// Sends all logging to a null sink (unit tests).
void silence_logging();

} // namespace rv
