#include "slurm/table.hpp"

#include "slurm/text.hpp"

#include <algorithm>

namespace rv::slurm {
namespace {

std::vector<std::string> to_strings(const std::vector<std::string_view>& v)
{
  std::vector<std::string> out;
  out.reserve(v.size());
  for (auto s : v) {
    out.emplace_back(text::trim(s));
  }
  return out;
}

bool is_rule(std::string_view line)
{
  return !line.empty() && line.find_first_not_of("- ") == std::string_view::npos &&
         line.find('-') != std::string_view::npos;
}

} // namespace

Table parse_table(std::string_view input, std::string_view delim, const std::vector<std::string>& header_words)
{
  Table t;
  auto all = text::lines(input);
  std::string chosen(delim);
  if (chosen.empty()) {
    if (input.find('\x1f') != std::string_view::npos) {
      chosen = "\x1f";
    } else if (input.find('|') != std::string_view::npos) {
      chosen = "|";
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> spans; // fixed-width columns
  bool first = true;
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto line = all[i];
    while (!line.empty() && line.front() == '\x1e') {
      line.remove_prefix(1);
    }
    if (text::trim(line).empty()) {
      continue;
    }
    auto fields = chosen.empty() ? text::split_ws(line) : text::split(line, chosen);
    if (first) {
      first = false;
      auto head = to_strings(fields);
      bool is_header = !head.empty() && std::any_of(head.begin(), head.end(), [&](const std::string& h) {
        return std::find(header_words.begin(), header_words.end(), text::upper(h)) != header_words.end();
      });
      if (is_header) {
        for (auto& h : head) {
          h = text::upper(h);
        }
        t.header = std::move(head);
        if (chosen.empty() && i + 1 < all.size() && is_rule(all[i + 1])) {
          // Fixed width: each run of dashes is one column's span.
          auto rule = all[i + 1];
          for (std::size_t p = 0; p < rule.size();) {
            p = rule.find('-', p);
            if (p == std::string_view::npos) {
              break;
            }
            auto e = rule.find(' ', p);
            e = e == std::string_view::npos ? rule.size() : e;
            spans.emplace_back(p, e - p);
            p = e;
          }
          ++i;
        }
        continue;
      }
    }
    if (!spans.empty()) {
      // Cells past the end of the line are left out (callers read a missing cell as empty):
      // a rule of any width then costs no more than the line itself.
      std::vector<std::string> row;
      for (std::size_t c = 0; c < spans.size() && spans[c].first < line.size(); ++c) {
        auto [p, n] = spans[c];
        if (c + 1 == spans.size()) {
          n = std::string_view::npos;
        }
        row.emplace_back(text::trim(line.substr(p, n)));
      }
      t.rows.push_back(std::move(row));
    } else {
      t.rows.push_back(to_strings(fields));
    }
  }
  return t;
}

int column(const Table& t, std::string_view name)
{
  for (std::size_t i = 0; i < t.header.size(); ++i) {
    if (t.header[i] == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

} // namespace rv::slurm
