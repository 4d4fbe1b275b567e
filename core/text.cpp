#include "core/text.hpp"

#include <algorithm>

namespace rv::text {
namespace {

char to_lower(char c)
{
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

char to_upper(char c)
{
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

} // namespace

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

std::string lower(std::string_view s)
{
  std::string out(s);
  std::ranges::transform(out, out.begin(), to_lower);
  return out;
}

std::string upper(std::string_view s)
{
  std::string out(s);
  std::ranges::transform(out, out.begin(), to_upper);
  return out;
}

bool iequals(std::string_view a, std::string_view b)
{
  return std::ranges::equal(a, b, [](char x, char y) { return to_lower(x) == to_lower(y); });
}

std::string first_line(std::string_view s)
{
  return std::string(trim(s.substr(0, s.find('\n'))));
}

std::string join(const std::vector<std::string>& items, std::string_view sep)
{
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      out += sep;
    }
    out += items[i];
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
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && blank(s[i])) {
      ++i;
    }
    const auto start = i;
    while (i < s.size() && !blank(s[i])) {
      ++i;
    }
    if (i > start) {
      out.push_back(s.substr(start, i - start));
    }
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view s)
{
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const auto nl = s.find('\n');
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

std::string shorten(std::string_view s, std::size_t most)
{
  if (s.size() <= most) {
    return std::string(s);
  }
  return std::string(s.substr(0, most)) + "...";
}

std::string next_steps(const std::vector<NextStep>& steps)
{
  std::size_t width = 0;
  for (const auto& s : steps) {
    width = std::max(width, s.command.size());
  }
  std::string out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::string line = (i == 0 ? "next: " : "      ") + steps[i].command;
    if (!steps[i].why.empty()) {
      line += std::string(width - steps[i].command.size() + 3, ' ') + "(" + steps[i].why + ")";
    }
    out += line + "\n";
  }
  return out;
}

} // namespace rv::text
