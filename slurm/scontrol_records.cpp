#include "slurm/scontrol.hpp"

#include "slurm/text.hpp"

#include <array>
#include <unordered_set>

namespace rv::slurm {
namespace {

// The characters of a key: letters, digits and `_/:.-` (a table: this runs for every byte).
constexpr auto key_chars = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[static_cast<std::size_t>(c)] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                                     c == '_' || c == '/' || c == ':' || c == '.' || c == '-';
  }
  return t;
}();

bool key_char(char c)
{
  return key_chars[static_cast<unsigned char>(c)];
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

const std::string_view* RecordView::get(std::string_view key) const
{
  for (const auto& [k, v] : fields) {
    if (k == key) {
      return &v;
    }
  }
  return nullptr;
}

std::string_view RecordView::value(std::string_view key) const
{
  auto v = get(key);
  return v == nullptr || text::is_null(*v) ? std::string_view{} : *v;
}

Record Record::from(const RecordView& v)
{
  Record r;
  r.fields.reserve(v.fields.size());
  std::unordered_set<std::string_view> keys; // linear, also for 200,000 fields of hostile output
  keys.reserve(v.fields.size());
  for (const auto& [key, value] : v.fields) {
    if (keys.insert(key).second) {
      r.fields.emplace_back(std::string(key), std::string(value));
    }
  }
  return r;
}

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

bool RecordReader::load_line()
{
  if (done_) {
    return false;
  }
  const auto nl = rest_.find('\n');
  line_ = rest_.substr(0, nl);
  while (!line_.empty() && (line_.back() == '\r' || line_.back() == ' ' || line_.back() == '\t')) {
    line_.remove_suffix(1);
  }
  if (nl == std::string_view::npos) {
    done_ = true;
  } else {
    rest_.remove_prefix(nl + 1);
  }
  keys_.clear();
  k_ = 0;
  // A key starts the line or follows a blank. Without tabs (scontrol prints none) the blanks are
  // found with memchr, which keeps a 10,000-node output a few milliseconds of work.
  const bool tabs = line_.find('\t') != std::string_view::npos;
  for (std::size_t i = 0; i < line_.size();) {
    if (auto len = key_at(line_, i); len > 0) {
      keys_.emplace_back(i, len);
      i += len;
    }
    std::size_t blank = tabs ? line_.find_first_of(" \t", i) : line_.find(' ', i);
    if (blank == std::string_view::npos) {
      break;
    }
    i = blank + 1;
  }
  return true;
}

const RecordView* RecordReader::next()
{
  cur_.fields.clear();
  for (;;) {
    if (k_ == keys_.size()) {
      if (!load_line()) {
        return cur_.fields.empty() ? nullptr : &cur_;
      }
      continue;
    }
    auto [pos, len] = keys_[k_];
    auto end = k_ + 1 < keys_.size() ? keys_[k_ + 1].first : line_.size();
    const std::string_view key = line_.substr(pos, len);
    if (first_key_.empty()) {
      first_key_ = key;
    }
    // Every record starts with the first key: seeing it again starts the next one.
    if (key == first_key_ && !cur_.fields.empty()) {
      return &cur_; // read again on the next call
    }
    cur_.fields.emplace_back(key, text::trim(line_.substr(pos + len + 1, end - pos - len - 1)));
    ++k_;
  }
}

Result<std::vector<Record>> parse_records(std::string_view text)
{
  std::vector<Record> out;
  RecordReader reader(text);
  while (const auto* r = reader.next()) {
    out.push_back(Record::from(*r));
  }
  return out;
}

} // namespace rv::slurm
