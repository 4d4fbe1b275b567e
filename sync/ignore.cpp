#include "sync/ignore.hpp"

#include <vector>

namespace rv::sync {
namespace {

// [...] at p (p points after '['); sets `next` past ']' and returns whether c matches.
bool match_class(std::string_view pat, std::size_t& i, char c, bool& valid)
{
  std::size_t j = i;
  bool negate = false;
  if (j < pat.size() && (pat[j] == '!' || pat[j] == '^')) {
    negate = true;
    ++j;
  }
  bool hit = false;
  bool first = true;
  while (j < pat.size() && (pat[j] != ']' || first)) {
    first = false;
    char lo = pat[j];
    if (lo == '\\' && j + 1 < pat.size()) {
      lo = pat[++j];
    }
    char hi = lo;
    if (j + 2 < pat.size() && pat[j + 1] == '-' && pat[j + 2] != ']') {
      hi = pat[j + 2];
      j += 2;
    }
    if (c >= lo && c <= hi) {
      hit = true;
    }
    ++j;
  }
  valid = j < pat.size();
  i = j + 1;
  return hit != negate;
}

// Matches pat[p..] against s[i..]. Each (p, i) that failed is remembered, so runs of `*` cost
// O(pattern x path x path) at worst instead of backtracking exponentially (found by fuzzing).
struct Matcher {
  std::string_view pat;
  std::string_view s;
  std::vector<bool> failed; // (p, i) -> already known not to match

  bool match_from(std::size_t p, std::size_t i)
  {
    const std::size_t key = p * (s.size() + 1) + i;
    if (failed[key]) {
      return false;
    }
    const bool hit = match_here(p, i);
    if (!hit) {
      failed[key] = true;
    }
    return hit;
  }

  bool match_here(std::size_t p, std::size_t i);
};

bool Matcher::match_here(std::size_t p, std::size_t i)
{
  while (p < pat.size()) {
    const char c = pat[p];
    if (c == '*') {
      if (p + 1 < pat.size() && pat[p + 1] == '*') {
        p += 2;
        if (p < pat.size() && pat[p] == '/') {
          ++p; // `**/`: zero or more whole directories
          for (std::size_t k = i; k <= s.size(); ++k) {
            if ((k == i || s[k - 1] == '/') && match_from(p, k)) {
              return true;
            }
          }
          return false;
        }
        for (std::size_t k = i; k <= s.size(); ++k) { // `**`: anything, '/' included
          if (match_from(p, k)) {
            return true;
          }
        }
        return false;
      }
      ++p;
      for (std::size_t k = i;; ++k) { // `*`: anything but '/'
        if (match_from(p, k)) {
          return true;
        }
        if (k == s.size() || s[k] == '/') {
          return false;
        }
      }
    }
    if (i >= s.size()) {
      return false;
    }
    if (c == '?') {
      if (s[i] == '/') {
        return false;
      }
    } else if (c == '[') {
      std::size_t q = p + 1;
      bool valid = false;
      const bool hit = match_class(pat, q, s[i], valid);
      if (valid) {
        if (!hit || s[i] == '/') {
          return false;
        }
        p = q;
        ++i;
        continue;
      }
      if (s[i] != '[') { // an unclosed '[' is a literal
        return false;
      }
    } else if (c == '\\' && p + 1 < pat.size()) {
      ++p;
      if (s[i] != pat[p]) {
        return false;
      }
    } else if (s[i] != c) {
      return false;
    }
    ++p;
    ++i;
  }
  return i == s.size();
}

std::string_view trim_trailing_spaces(std::string_view line)
{
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    if (line.size() >= 2 && line[line.size() - 2] == '\\') {
      break; // "\ " keeps its space
    }
    line.remove_suffix(1);
  }
  return line;
}

} // namespace

bool glob_match(std::string_view pattern, std::string_view path)
{
  Matcher m{pattern, path, std::vector<bool>((pattern.size() + 1) * (path.size() + 1), false)};
  return m.match_from(0, 0);
}

void IgnoreRules::add_text(std::string_view text)
{
  while (!text.empty()) {
    auto nl = text.find('\n');
    add_line(text.substr(0, nl));
    if (nl == std::string_view::npos) {
      break;
    }
    text.remove_prefix(nl + 1);
  }
}

void IgnoreRules::add_line(std::string_view line)
{
  line = trim_trailing_spaces(line);
  if (line.empty() || line.front() == '#') {
    return;
  }
  Rule r;
  if (line.front() == '!') {
    r.negate = true;
    line.remove_prefix(1);
  } else if (line.starts_with("\\!") || line.starts_with("\\#")) {
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    r.dir_only = true;
    line.remove_suffix(1);
  }
  if (line.find('/') != std::string_view::npos) {
    r.anchored = true;
  }
  if (!line.empty() && line.front() == '/') {
    line.remove_prefix(1);
  }
  if (line.empty()) {
    return;
  }
  r.pattern = std::string(line);
  m_rules.push_back(std::move(r));
}

int IgnoreRules::decide(std::string_view path, bool is_dir) const
{
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (auto it = m_rules.rbegin(); it != m_rules.rend(); ++it) {
    if (it->dir_only && !is_dir) {
      continue;
    }
    if (glob_match(it->pattern, it->anchored ? path : name)) {
      return it->negate ? 0 : 1;
    }
  }
  return -1;
}

bool IgnoreRules::ignored(std::string_view rel_path, bool is_dir) const
{
  if (m_rules.empty()) {
    return false;
  }
  for (std::size_t pos = rel_path.find('/'); pos != std::string_view::npos; pos = rel_path.find('/', pos + 1)) {
    if (decide(rel_path.substr(0, pos), true) == 1) {
      return true;
    }
  }
  return decide(rel_path, is_dir) == 1;
}

const std::vector<std::string>& default_ignores()
{
  static const std::vector<std::string> patterns = {".git/",
                                                    ".hg/",
                                                    ".svn/",
                                                    "__pycache__/",
                                                    "*.pyc",
                                                    ".venv/",
                                                    "venv/",
                                                    ".tox/",
                                                    ".nox/",
                                                    ".mypy_cache/",
                                                    ".pytest_cache/",
                                                    ".ruff_cache/",
                                                    ".ipynb_checkpoints/",
                                                    "node_modules/",
                                                    ".DS_Store",
                                                    "*.egg-info/",
                                                    "wandb/",
                                                    ".idea/",
                                                    ".vscode/"};
  return patterns;
}

} // namespace rv::sync
