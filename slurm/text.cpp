#include "slurm/text.hpp"

#include <charconv>
#include <cmath>

namespace rv::slurm::text {

std::string_view trim(std::string_view s)
{
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && blank(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> lines(std::string_view s)
{
  std::vector<std::string_view> out;
  while (!s.empty()) {
    auto nl = s.find('\n');
    auto line = s.substr(0, nl);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    out.push_back(line);
    if (nl == std::string_view::npos) {
      break;
    }
    s.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, std::string_view delim)
{
  std::vector<std::string_view> out;
  while (true) {
    auto p = s.find(delim);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) {
      return out;
    }
    s.remove_prefix(p + delim.size());
  }
}

std::vector<std::string_view> split_ws(std::string_view s)
{
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) {
      ++i;
    }
    auto start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') {
      ++i;
    }
    if (i > start) {
      out.push_back(s.substr(start, i - start));
    }
  }
  return out;
}

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
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::string shorten(std::string_view s, std::size_t most)
{
  if (s.size() <= most) {
    return std::string(s);
  }
  return std::string(s.substr(0, most)) + "...";
}

std::string lower(std::string_view s)
{
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::string upper(std::string_view s)
{
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    }
  }
  return out;
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
