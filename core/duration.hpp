#pragma once
// The time and memory grammar users type, and Slurm's own time format.

#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rv {

// Parses a user duration: `30m`, `2h`, `1.5h`, `3d`, `90s`, compound `1h30m` / `2d12h` /
// `1d2h3m4s` (largest unit first, each once), `2:59:00`, `1-12:00:00`, `MM:SS` (minutes:seconds,
// as in sbatch), or a bare number of minutes (Slurm's convention). Zero and negatives are errors.
Result<std::int64_t> parse_duration(std::string_view text);

// Parses a Slurm time field (`D-HH:MM:SS`, `HH:MM:SS`, `MM:SS`, minutes); `UNLIMITED`,
// `INFINITE`, `N/A` and empty give -1.
Result<std::int64_t> parse_slurm_time(std::string_view text);

// Formats seconds as Slurm's `[D-]HH:MM:SS`.
std::string format_slurm_time(std::int64_t seconds);

// Formats seconds for people: `45s`, `12m`, `2h30m`, `3d4h`.
std::string format_human_duration(std::int64_t seconds);

// A wait in words, the one rule of every message (#25): "now" when it is at most `now_s` seconds
// (0: only a wait that is over; rv why passes the plan's now_threshold_s, within which the probes
// call a start "now"), else "in ~2h30m"; no estimate is "at an unknown time". `cell` is the form
// for a table's column: "now", "~2h30m", "unknown".
std::string wait_in_words(std::optional<std::int64_t> seconds, std::int64_t now_s = 0, bool cell = false);

// Parses a memory size (`200G`, `512M`, `1.5T`, `4096` = MiB) into MiB.
Result<std::int64_t> parse_memory_mb(std::string_view text);

} // namespace rv
