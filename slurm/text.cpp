#include "slurm/text.hpp"

#include "core/number.hpp"

#include <charconv>
#include <cmath>

namespace rv::slurm::text {

std::vector<std::string_view> split_top_level(std::string_view s, char delim)
{
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '[') {
      ++depth;
    } else if ((c == ')' || c == ']') && depth > 0) {
      --depth;
    } else if (c == delim && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

bool is_null(std::string_view s)
{
  s = trim(s);
  return s.empty() || s == "(null)" || s == "N/A" || s == "n/a" || s == "None" || s == "none";
}

std::optional<std::int64_t> to_int(std::string_view s)
{
  s = trim(s);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::optional<int> to_int32(std::string_view s)
{
  auto v = to_int(s);
  if (!v || *v > 2147483647 || *v < -2147483647) {
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

std::optional<std::int64_t> to_bounded(std::string_view s, std::int64_t most)
{
  auto v = to_int(s);
  if (!v || *v < 0 || *v > most) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> to_double(std::string_view s)
{
  s = trim(s);
  const auto v = rv::text::parse_double(s);
  if (!v || !std::isfinite(*v)) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::string> comma_list(std::string_view s)
{
  std::vector<std::string> out;
  if (is_null(s)) {
    return out;
  }
  for (auto item : split(s, ",")) {
    item = trim(item);
    if (!is_null(item)) {
      out.emplace_back(item);
    }
  }
  return out;
}

} // namespace rv::slurm::text
