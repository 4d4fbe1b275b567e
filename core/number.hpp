#pragma once
// Numbers read from text where the standard libraries differ (issue #40): one grammar on all.

#include <optional>
#include <string_view>

namespace rv::text {

// The whole of `s` as a double, by std::from_chars's rules (no space, no '+', '-' allowed,
// decimal with an optional exponent, inf and nan): nullopt otherwise, or when out of range.
// libc++ before 20 (macOS's, and Debian's libc++-16) has no floating-point from_chars: there the
// same grammar is checked first and strtod (the C locale: rv never calls setlocale) converts.
std::optional<double> parse_double(std::string_view s);

} // namespace rv::text
