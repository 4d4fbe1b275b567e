#pragma once
// Text helpers of the slurm/ parsers (Slurm's null markers, its numbers and lists); internal to
// slurm/ (not a public API). The general ones (trim, case, split, join) are core/text.hpp's.

#include "core/text.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm::text {

using rv::text::first_line;
using rv::text::iequals;
using rv::text::join;
using rv::text::lines;
using rv::text::lower;
using rv::text::shorten;
using rv::text::split;
using rv::text::split_ws;
using rv::text::trim;
using rv::text::upper;

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

// Splits a comma list, dropping empty items and null markers.
std::vector<std::string> comma_list(std::string_view s);

} // namespace rv::slurm::text
