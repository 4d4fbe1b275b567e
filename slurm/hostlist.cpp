#include "slurm/hostlist.hpp"

#include "core/checked.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>

namespace rv::slurm {
namespace {

// Bounds on what a hostlist may expand to besides max_hosts (which also bounds one range),
// checked before expanding: cluster output is input.
constexpr std::size_t max_digits = 18;       // digits of one bracket number: fits int64 with room for ++
constexpr std::size_t max_name_length = 255; // characters of one host name
constexpr std::size_t max_groups = 16;       // bracket groups in one item: `n[1-2]-ib[3-4]` has two

// Expands one item with zero or more bracket groups, appending to `out` (which counts towards
// max_hosts).
Result<bool> expand_item(std::string_view item, std::vector<std::string>& out)
{
  auto open = item.find('[');
  if (open == std::string_view::npos) {
    if (item.find(']') != std::string_view::npos) {
      return fail(ErrorCode::parse, fmt::format("unbalanced ']' in hostlist item '{}'", text::shorten(item)));
    }
    if (item.size() > max_name_length) {
      return fail(ErrorCode::parse, fmt::format("a host name in hostlist item '{}' is longer than {} characters",
                                                text::shorten(item), max_name_length));
    }
    out.emplace_back(item);
    return true;
  }
  if (std::count(item.begin(), item.end(), '[') > static_cast<std::ptrdiff_t>(max_groups)) {
    return fail(ErrorCode::parse,
                fmt::format("hostlist item '{}' has more than {} bracket groups", text::shorten(item), max_groups));
  }
  auto close = item.find(']', open);
  if (close == std::string_view::npos) {
    return fail(ErrorCode::parse, fmt::format("unbalanced '[' in hostlist item '{}'", text::shorten(item)));
  }
  auto prefix = item.substr(0, open);
  auto ranges = item.substr(open + 1, close - open - 1);
  // The rest may hold more brackets (`n[1-2]-ib[3-4]`): expand it once, then combine.
  std::vector<std::string> rest;
  RV_TRY(ok, expand_item(item.substr(close + 1), rest));
  (void)ok;
  std::size_t longest_tail = 0;
  for (const auto& tail : rest) {
    longest_tail = std::max(longest_tail, tail.size());
  }
  for (auto range : text::split(ranges, ",")) {
    auto dash = range.find('-');
    auto lo_text = range.substr(0, dash);
    auto hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    for (auto number : {lo_text, hi_text}) {
      if (number.size() > max_digits) {
        return fail(ErrorCode::parse, fmt::format("number '{}' in hostlist item '{}' has more than {} digits",
                                                  text::shorten(number), text::shorten(item), max_digits));
      }
    }
    auto lo = text::to_int(lo_text);
    auto hi = text::to_int(hi_text);
    if (!lo || !hi || *lo < 0 || *hi < *lo) {
      return fail(ErrorCode::parse,
                  fmt::format("bad range '{}' in hostlist item '{}'", text::shorten(range), text::shorten(item)));
    }
    // Both numbers have at most 18 digits, so neither hi - lo + 1 nor ++n below can overflow.
    auto count = static_cast<std::size_t>(*hi - *lo) + 1;
    if (count > max_hosts) {
      return fail(ErrorCode::parse, fmt::format("range '{}' in hostlist item '{}' has more than {} hosts", range,
                                                text::shorten(item), max_hosts));
    }
    auto names = checked_mul(count, rest.size());
    if (!names || *names > max_hosts - out.size()) {
      return fail(ErrorCode::parse,
                  fmt::format("hostlist item '{}' expands to more than {} hosts", text::shorten(item), max_hosts));
    }
    auto width = lo_text.size(); // `01-03` keeps its padding
    if (prefix.size() + std::max(width, hi_text.size()) + longest_tail > max_name_length) {
      return fail(ErrorCode::parse, fmt::format("a host name in hostlist item '{}' is longer than {} characters",
                                                text::shorten(item), max_name_length));
    }
    for (auto n = *lo; n <= *hi; ++n) {
      auto number = fmt::format("{:0{}}", n, width);
      for (const auto& tail : rest) {
        out.push_back(fmt::format("{}{}{}", prefix, number, tail));
      }
    }
  }
  return true;
}

} // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view list)
{
  std::vector<std::string> out;
  list = text::trim(list);
  if (text::is_null(list)) {
    return out;
  }
  for (auto item : text::split_top_level(list, ',')) {
    item = text::trim(item);
    if (item.empty()) {
      continue;
    }
    RV_TRY(ok, expand_item(item, out));
    (void)ok;
  }
  return out;
}

std::string compress_hostlist(const std::vector<std::string>& hosts)
{
  struct Group {
    std::string prefix;
    std::size_t width = 0;
    std::vector<std::int64_t> numbers;
  };
  std::vector<Group> groups;
  std::vector<std::string> plain;                  // names that end without digits, kept as they are
  std::vector<std::pair<bool, std::size_t>> order; // (is_group, index) in first-seen order
  std::map<std::pair<std::string, std::size_t>, std::size_t> index;
  for (const auto& h : hosts) {
    auto end = h.size();
    auto start = end;
    while (start > 0 && h[start - 1] >= '0' && h[start - 1] <= '9') {
      --start;
    }
    auto number = text::to_int(std::string_view(h).substr(start));
    if (start == end || !number || end - start > 18) {
      order.emplace_back(false, plain.size());
      plain.push_back(h);
      continue;
    }
    auto key = std::make_pair(h.substr(0, start), end - start);
    auto [it, inserted] = index.try_emplace(key, groups.size());
    if (inserted) {
      groups.push_back(Group{key.first, key.second, {}});
      order.emplace_back(true, it->second);
    }
    groups[it->second].numbers.push_back(*number);
  }
  std::vector<std::string> parts;
  for (auto [is_group, i] : order) {
    if (!is_group) {
      parts.push_back(plain[i]);
      continue;
    }
    auto& g = groups[i];
    std::sort(g.numbers.begin(), g.numbers.end());
    g.numbers.erase(std::unique(g.numbers.begin(), g.numbers.end()), g.numbers.end());
    if (g.numbers.size() == 1) {
      parts.push_back(fmt::format("{}{:0{}}", g.prefix, g.numbers[0], g.width));
      continue;
    }
    std::vector<std::string> ranges;
    for (std::size_t a = 0; a < g.numbers.size();) {
      auto b = a;
      while (b + 1 < g.numbers.size() && g.numbers[b + 1] == g.numbers[b] + 1) {
        ++b;
      }
      ranges.push_back(a == b ? fmt::format("{:0{}}", g.numbers[a], g.width)
                              : fmt::format("{:0{}}-{:0{}}", g.numbers[a], g.width, g.numbers[b], g.width));
      a = b + 1;
    }
    parts.push_back(fmt::format("{}[{}]", g.prefix, fmt::join(ranges, ",")));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

} // namespace rv::slurm
