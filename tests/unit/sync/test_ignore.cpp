// gitignore-style patterns for .rvignore and the default ignores.

#include "sync/ignore.hpp"

#include <doctest/doctest.h>

#include <string>

using rv::sync::glob_match;
using rv::sync::IgnoreRules;

TEST_CASE("sync: glob matching")
{
  CHECK(glob_match("*.py", "train.py"));
  CHECK_FALSE(glob_match("*.py", "a/train.py"));
  CHECK(glob_match("a/**/b", "a/b"));
  CHECK(glob_match("a/**/b", "a/x/y/b"));
  CHECK(glob_match("**/b", "x/b"));
  CHECK(glob_match("a/**", "a/x/y"));
  CHECK(glob_match("data?.csv", "data1.csv"));
  CHECK_FALSE(glob_match("data?.csv", "data/.csv"));
  CHECK(glob_match("[a-c]x", "bx"));
  CHECK_FALSE(glob_match("[!a-c]x", "bx"));
  CHECK(glob_match("\\*lit", "*lit"));
  CHECK_FALSE(glob_match("\\*lit", "xlit"));
  CHECK(glob_match("[unclosed", "[unclosed"));
}

TEST_CASE("sync: runs of stars do not backtrack exponentially (found by fuzzing, #15)")
{
  // Before memoisation each of these took minutes: every `*` and `**` retried every split.
  const std::string path(200, 'a');
  CHECK_FALSE(glob_match(std::string(40, '*') + "b", path));
  CHECK_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", path));
  CHECK_FALSE(glob_match("**/**/**/**/**/**/**/**/**/**/**/b", "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/c"));
  CHECK(glob_match(std::string(40, '*') + "a", path));
  CHECK(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", path));
}

TEST_CASE("sync: a pattern of a thousand stars costs pattern x path, not pattern x path x path (#15)" *
          doctest::timeout(5.0))
{
  // The 1,000,000-input fuzz run's input: memoised backtracking still took 4.5 s on it, since
  // each `*` state looped over the rest of the path. IgnoreRules asks once per directory of the
  // path, twice here.
  const std::string stars = std::string(600, '*') + "\\!" + std::string(558, '*');
  const std::string path(522, 'a');
  CHECK_FALSE(glob_match(stars, path)); // the literal '!' is not in the path
  CHECK(glob_match(stars, path + "!"));
  IgnoreRules rules;
  rules.add_text(stars + "\n");
  CHECK_FALSE(rules.ignored(path, false));
  CHECK(rules.ignored("d/" + path + "!b", false));
  // `*` never crosses '/', `**` does, `**/` stands for whole directories only.
  CHECK_FALSE(glob_match("a*b", "a/b"));
  CHECK(glob_match("a**b", "a/x/b"));
  CHECK(glob_match("a/**/b", "a/x/b"));
  CHECK_FALSE(glob_match("a/**/b", "a/xb"));
  CHECK(glob_match("**", ""));
  CHECK_FALSE(glob_match("?", ""));
}

TEST_CASE("sync: .rvignore rules: anchoring, directories, negation, last match wins")
{
  IgnoreRules r;
  r.add_text("# comment\n\n*.ckpt\n/build\nlogs/\nsub/tmp.txt\n!keep.ckpt\nout/**/*.bin\n");
  CHECK(r.ignored("model.ckpt", false));
  CHECK(r.ignored("a/b/model.ckpt", false));
  CHECK_FALSE(r.ignored("keep.ckpt", false));
  CHECK(r.ignored("build", true));
  CHECK(r.ignored("build/x.o", false));
  CHECK_FALSE(r.ignored("src/build/x.o", false)); // anchored at the root
  CHECK(r.ignored("logs/run.txt", false));        // below an ignored directory
  CHECK(r.ignored("a/logs/run.txt", false));
  CHECK_FALSE(r.ignored("logs", false)); // `logs/` matches directories only
  CHECK(r.ignored("sub/tmp.txt", false));
  CHECK_FALSE(r.ignored("x/sub/tmp.txt", false));
  CHECK(r.ignored("out/a/b/w.bin", false));
  CHECK_FALSE(r.ignored("train.py", false));
}

TEST_CASE("sync: nothing below an ignored directory comes back, trailing spaces are trimmed")
{
  IgnoreRules r;
  r.add_line("cache/   ");
  r.add_line("!cache/keep.txt");
  CHECK(r.ignored("cache/keep.txt", false));
  IgnoreRules empty;
  CHECK_FALSE(empty.ignored("anything", false));
}
