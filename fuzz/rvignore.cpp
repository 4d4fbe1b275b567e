// .rvignore rules: the first line is a path to ask about, the rest the rules.
#include "fuzz/fuzz.hpp"
#include "sync/ignore.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  auto nl = in.find('\n');
  auto path = in.substr(0, nl);
  auto rules_text = nl == std::string_view::npos ? std::string_view{} : in.substr(nl + 1);
  rv::sync::IgnoreRules rules;
  rules.add_text(rules_text);
  (void)rules.ignored(path, false);
  (void)rules.ignored(path, true);
  (void)rv::sync::glob_match(rules_text.substr(0, rules_text.find('\n')), path);
  return 0;
}
