#include "slurm/scontrol.hpp"

#include "slurm/text.hpp"

#include <unordered_set>

namespace rv::slurm {
namespace {

bool key_char(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '/' ||
         c == ':' || c == '.' || c == '-';
}

// Length of a `Key=` starting at `i` (Key starts upper-case), or 0.
std::size_t key_at(std::string_view line, std::size_t i)
{
  if (i >= line.size() || line[i] < 'A' || line[i] > 'Z') {
    return 0;
  }
  auto j = i;
  while (j < line.size() && key_char(line[j])) {
    ++j;
  }
  return j < line.size() && line[j] == '=' ? j - i : 0;
}

} // namespace

const std::string* Record::get(std::string_view key) const
{
  for (const auto& [k, v] : fields) {
    if (k == key) {
      return &v;
    }
  }
  return nullptr;
}

std::string Record::value(std::string_view key) const
{
  auto v = get(key);
  return v == nullptr || text::is_null(*v) ? std::string{} : *v;
}

Result<std::vector<Record>> parse_records(std::string_view input)
{
  std::vector<Record> out;
  std::string_view first_key;
  // The last record's keys (views into `input`, which outlives this call): a repeated key is
  // found in constant time, without a copy of each key.
  std::unordered_set<std::string_view> keys_of_last;
  std::vector<std::pair<std::size_t, std::size_t>> keys; // one line's (pos, length), reused
  for (auto line : text::lines(input)) {
    // A key starts at the line start or after a blank, with an upper-case letter: values keep
    // their inner spaces (Reason=..., OS=Linux ... #1 SMP, Command=a b) up to the next key.
    keys.clear();
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t') {
        if (auto len = key_at(line, i); len > 0) {
          keys.emplace_back(i, len);
          i += len;
        }
      }
    }
    for (std::size_t k = 0; k < keys.size(); ++k) {
      auto [pos, len] = keys[k];
      auto end = k + 1 < keys.size() ? keys[k + 1].first : line.size();
      const std::string_view key = line.substr(pos, len);
      if (first_key.empty()) {
        first_key = key;
      }
      if (out.empty() || (key == first_key && keys_of_last.contains(key))) {
        out.emplace_back().fields.reserve(keys.size());
        keys_of_last.clear();
      }
      if (keys_of_last.insert(key).second) {
        out.back().fields.emplace_back(std::string(key),
                                       std::string(text::trim(line.substr(pos + len + 1, end - pos - len - 1))));
      }
    }
  }
  return out;
}

} // namespace rv::slurm
