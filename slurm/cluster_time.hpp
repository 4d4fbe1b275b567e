#pragma once
// Times as Slurm prints them: broken-down wall-clock time in the *cluster's* timezone.

#include "core/result.hpp"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rv::slurm {

// A `YYYY-MM-DDTHH:MM:SS` wall-clock time on the cluster; never converted with the local zone.
struct ClusterTime {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  auto operator<=>(const ClusterTime&) const = default;
};

// Parses `2026-11-22T04:05:42`; `Unknown`, `N/A`, `None`, `(null)` and "" give nullopt.
// Other text (e.g. `14:24:22` under SLURM_TIME_FORMAT=relative) is a parse error.
Result<std::optional<ClusterTime>> parse_cluster_time(std::string_view text);

// Converts a cluster time to Unix seconds given the cluster's UTC offset (east positive),
// e.g. +3600 for CET. Pure arithmetic: the laptop's timezone is never consulted.
std::int64_t to_unix_seconds(const ClusterTime& t, std::int64_t utc_offset_s);

// Parses `date +%z` output (`+0100`, `-0530`) into seconds east of UTC.
Result<std::int64_t> parse_utc_offset(std::string_view text);

// Formats as Slurm does: `2026-11-22T04:05:42`.
std::string format_cluster_time(const ClusterTime& t);

} // namespace rv::slurm
