#include "core/number.hpp"

#include "core/text.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>

namespace rv::text {

#if !(defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L)
namespace {

bool all_of_class(std::string_view s, bool (*in)(char))
{
  return std::all_of(s.begin(), s.end(), in);
}

bool is_digit(char c)
{
  return c >= '0' && c <= '9';
}

bool is_word(char c)
{
  return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// std::from_chars's grammar (chars_format::general) for the whole of `s`.
bool float_grammar(std::string_view s)
{
  if (!s.empty() && s.front() == '-') {
    s.remove_prefix(1);
  }
  if (iequals(s, "inf") || iequals(s, "infinity") || iequals(s, "nan")) {
    return true;
  }
  if (s.size() >= 5 && iequals(s.substr(0, 4), "nan(") && s.back() == ')') {
    return all_of_class(s.substr(4, s.size() - 5), is_word);
  }
  std::size_t i = 0;
  std::size_t digits = 0;
  for (; i < s.size() && is_digit(s[i]); ++i, ++digits) {
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && is_digit(s[i]); ++i, ++digits) {
    }
  }
  if (digits == 0) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      ++i;
    }
    const std::size_t exponent = i;
    for (; i < s.size() && is_digit(s[i]); ++i) {
    }
    if (i == exponent) {
      return false;
    }
  }
  return i == s.size();
}

} // namespace
#endif

std::optional<double> parse_double(std::string_view s)
{
  double v = 0;
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) {
    return std::nullopt;
  }
#else
  if (!float_grammar(s)) {
    return std::nullopt;
  }
  const std::string text(s);
  errno = 0;
  char* end = nullptr;
  v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || end != text.c_str() + text.size()) {
    return std::nullopt;
  }
#endif
  return v;
}

} // namespace rv::text
