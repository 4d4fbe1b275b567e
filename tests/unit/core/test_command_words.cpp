// The one shell-word grammar (core/command/words): tokens as sh reads them. The cases marked
// "old sync" or "old templates" are where the two splitters rv had before (sync/command.cpp,
// templates/launcher.cpp) disagreed or were wrong; each assertion failed against that one.

#include "core/command/words.hpp"

#include <doctest/doctest.h>

using rv::command::is_assignment;
using rv::command::simple_commands;
using rv::command::split_words;
using rv::command::tokenize;
using rv::command::TokenKind;
using V = std::vector<std::string>;

namespace {

std::vector<V> argvs(std::string_view line)
{
  std::vector<V> out;
  for (const auto& c : simple_commands(line)) {
    out.push_back(c.argv());
  }
  return out;
}

} // namespace

TEST_CASE("command words: shell lines split like sh reads them")
{
  CHECK(split_words("python 'my file.py' --msg \"a \\\"b\\\"\"") == V{"python", "my file.py", "--msg", "a \"b\""});
  CHECK(split_words("a&&b || c;d|e &") == V{"a", "&&", "b", "||", "c", ";", "d", "|", "e", "&"});
  CHECK(split_words("x\\ y  ''") == V{"x y", ""});
  CHECK(split_words("a|&b") == V{"a", "|&", "b"});
  // An unterminated quote runs to the end of the line.
  CHECK(split_words("echo 'a b") == V{"echo", "a b"});
  CHECK(split_words("echo \"a b") == V{"echo", "a b"});
}

TEST_CASE("command words: in double quotes a backslash escapes only $ ` \" \\ and newline (old templates dropped it)")
{
  CHECK(split_words(R"("a\b" "c\$d" "e\\f")") == V{"a\\b", "c$d", "e\\f"});
  CHECK(split_words("'a\\b'") == V{"a\\b"});
  // Backslash-newline disappears inside double quotes too (old sync and old templates kept the newline).
  CHECK(split_words("\"a\\\nb\"") == V{"ab"});
}

TEST_CASE("command words: a line continuation joins the lines (old sync made a word of the newline)")
{
  CHECK(split_words("torchrun \\\n  --nproc_per_node 2 \\\n  train.py") ==
        V{"torchrun", "--nproc_per_node", "2", "train.py"});
  CHECK(split_words("tra\\\nin.py") == V{"train.py"});
}

TEST_CASE("command words: a newline ends a command (old sync read two lines as one command)")
{
  CHECK(argvs("echo hi\npython train.py") == std::vector<V>{{"echo", "hi"}, {"python", "train.py"}});
}

TEST_CASE("command words: # starts a comment only at the start of a word (old sync kept comments as words)")
{
  CHECK(split_words("python train.py # scripts/train.py && rm x") == V{"python", "train.py"});
  CHECK(split_words("echo a#b") == V{"echo", "a#b"});
  CHECK(split_words("echo '#x' \"#y\"") == V{"echo", "#x", "#y"});
  CHECK(argvs("# torchrun t.py\necho hi") == std::vector<V>{{"echo", "hi"}});
}

TEST_CASE("command words: substitutions stay in their word, as typed")
{
  CHECK(split_words("python $(pwd)/train.py --seed ${SEED:-1} `date +%s`") ==
        V{"python", "$(pwd)/train.py", "--seed", "${SEED:-1}", "`date +%s`"});
  CHECK(split_words("echo \"$(echo \"a b\")\" $((1 + (2)))") == V{"echo", "$(echo \"a b\")", "$((1 + (2)))"});
  CHECK(argvs("echo $(cd x && ls); python t.py") == std::vector<V>{{"echo", "$(cd x && ls)"}, {"python", "t.py"}});
}

TEST_CASE("command words: redirections are operators with their targets, not arguments")
{
  const auto tokens = tokenize("python t.py 2>&1 >>log <in &>all");
  V texts;
  for (const auto& t : tokens) {
    texts.push_back(t.text);
  }
  CHECK(texts == V{"python", "t.py", "2>&", "1", ">>", "log", "<", "in", "&>", "all"});
  CHECK(tokens[2].kind == TokenKind::redirect);
  CHECK(tokens[8].kind == TokenKind::redirect);
  const auto cmds = simple_commands("python t.py 2>&1 | tee out.log");
  REQUIRE(cmds.size() == 2);
  CHECK(cmds[0].argv() == V{"python", "t.py"});
  REQUIRE(cmds[0].redirects.size() == 1);
  CHECK(cmds[0].redirects[0].text == "1");
  CHECK(cmds[1].argv() == V{"tee", "out.log"});
  // A quoted digit is a word, not a file descriptor.
  CHECK(split_words("echo '2'>x") == V{"echo", "2", ">", "x"});
}

TEST_CASE("command words: offsets point into the line, past closing quotes")
{
  const std::string line = "FOO='a b' torchrun \"t.py\"";
  const auto tokens = tokenize(line);
  REQUIRE(tokens.size() == 3);
  CHECK(line.substr(tokens[0].begin, tokens[0].end - tokens[0].begin) == "FOO='a b'");
  CHECK(tokens[0].text == "FOO=a b");
  CHECK(line.substr(tokens[1].begin, tokens[1].end - tokens[1].begin) == "torchrun");
  CHECK(tokens[2].end == line.size());
}

TEST_CASE("command words: assignments need a POSIX name (old sync took 1A=b)")
{
  CHECK(is_assignment("CUDA_VISIBLE_DEVICES=0"));
  CHECK(is_assignment("_x1="));
  CHECK_FALSE(is_assignment("1A=b"));
  CHECK_FALSE(is_assignment("--lr=3"));
  CHECK_FALSE(is_assignment("=x"));
  CHECK_FALSE(is_assignment("a-b=c"));
}
