#pragma once
// gitignore-style patterns, for `.rvignore` and the default ignores. Pure.

#include <string>
#include <string_view>
#include <vector>

namespace rv::sync {

// Matches `path` against a glob: `*` and `?` never cross '/', `**` does, `[a-z]`/`[!x]` classes,
// `\` escapes the next character.
bool glob_match(std::string_view pattern, std::string_view path);

// An ordered list of gitignore rules; the last rule that matches a path decides. Supported:
// comments, blank lines, `!` negation, a trailing `/` (directories only), a leading or inner `/`
// (anchored at the root, else the pattern matches a name at any depth), `*`, `?`, `[...]`, `**`.
class IgnoreRules {
public:
  // Adds every line of a .gitignore-style text.
  void add_text(std::string_view text);
  // Adds one line.
  void add_line(std::string_view line);

  // Tells whether `rel_path` ('/'-separated, relative to the root) is ignored: itself, or one of
  // its parent directories (as in git, nothing below an ignored directory comes back).
  bool ignored(std::string_view rel_path, bool is_dir) const;

  bool empty() const { return m_rules.empty(); }

private:
  struct Rule {
    std::string pattern;
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;
  };
  // 1 ignored, 0 re-included, -1 no rule matched.
  int decide(std::string_view path, bool is_dir) const;
  std::vector<Rule> m_rules;
};

// What rv never sends in a project without git: VCS metadata, caches, virtual environments.
const std::vector<std::string>& default_ignores();

} // namespace rv::sync
