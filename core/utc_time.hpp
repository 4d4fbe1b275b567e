#pragma once
// The one date format of rv's records (`created_at`, `submitted_at`, `pruned_at`...):
// "2026-11-22T05:37:42Z", UTC to the second. One formatter and one parser, pure arithmetic: the
// machine's timezone is never consulted.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rv {

// "2026-11-22T05:37:42Z" for `epoch` seconds since the Unix epoch.
std::string utc_iso(std::int64_t epoch);

// The epoch seconds of utc_iso's form; nullopt when `text` is empty or anything else (a missing
// `Z`, a field out of range, trailing text).
std::optional<std::int64_t> parse_utc_iso(std::string_view text);

} // namespace rv
