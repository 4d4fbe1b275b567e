#pragma once
// Small text helpers, written once for every folder: trim, case, split, join.

#include <string>
#include <string_view>
#include <vector>

namespace rv::text {

// Removes leading and trailing spaces, tabs, '\r' and '\n'.
std::string_view trim(std::string_view s);

// ASCII lower-case and upper-case copies (the locale plays no part).
std::string lower(std::string_view s);
std::string upper(std::string_view s);

// ASCII case-insensitive equality.
bool iequals(std::string_view a, std::string_view b);

// The items with `sep` between them.
// The first line of `s`, trimmed ("" for none).
std::string first_line(std::string_view s);

std::string join(const std::vector<std::string>& items, std::string_view sep);

// Splits on one delimiter string; keeps empty fields (pipe formats rely on their position).
std::vector<std::string_view> split(std::string_view s, std::string_view delim);

// Splits on runs of blanks (space, tab, '\r'); drops empty fields.
std::vector<std::string_view> split_ws(std::string_view s);

// Splits into lines without '\r' and trailing blanks: captures come with CRLF and padding.
std::vector<std::string_view> lines(std::string_view s);

// `s` as it is, or its first `most` characters and "..." when longer: for error messages that
// quote output, which may be any length.
std::string shorten(std::string_view s, std::size_t most = 60);

// The "what to type next" block after a command: `next: CMD   (WHY)`, one per line, the commands
// padded to one width so the reasons line up whatever the ids' lengths; a row without a reason
// is the command alone.
struct NextStep {
  std::string command;
  std::string why;
};
std::string next_steps(const std::vector<NextStep>& steps);

} // namespace rv::text
