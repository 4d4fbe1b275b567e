#pragma once
// Small text helpers shared by the slurm/ parsers; internal to slurm/ (not a public API).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm::text {

// Splits into lines without '\r' and trailing blanks: captures come with CRLF and padding.
std::vector<std::string_view> lines(std::string_view s);

// Removes leading and trailing spaces, tabs and '\r'.
std::string_view trim(std::string_view s);

// Splits on one delimiter string; keeps empty fields (pipe formats rely on their position).
std::vector<std::string_view> split(std::string_view s, std::string_view delim);

// Splits on runs of blanks; drops empty fields.
std::vector<std::string_view> split_ws(std::string_view s);

// Splits on commas outside parentheses and brackets: `gpu:a100:2(S:2,7)`, `a[1,3],b`.
std::vector<std::string_view> split_top_level(std::string_view s, char delim = ',');

// True for values Slurm prints instead of nothing: "", "(null)", "N/A", "n/a", "None".
bool is_null(std::string_view s);

// A whole non-negative or negative integer, or nothing.
std::optional<std::int64_t> to_int(std::string_view s);

// A whole int that fits an int, or nothing.
std::optional<int> to_int32(std::string_view s);

// A whole number from 0 to `most`, or nothing: for counts and sizes that the planner multiplies.
std::optional<std::int64_t> to_bounded(std::string_view s, std::int64_t most);

// A decimal number, or nothing.
std::optional<double> to_double(std::string_view s);

// `s` as it is, or its first `most` characters and "..." when longer: for error messages that
// quote cluster output, which may be any length.
std::string shorten(std::string_view s, std::size_t most = 60);

// ASCII lower-case copy.
std::string lower(std::string_view s);

// ASCII upper-case copy.
std::string upper(std::string_view s);

// Splits a comma list, dropping empty items and null markers.
std::vector<std::string> comma_list(std::string_view s);

} // namespace rv::slurm::text
