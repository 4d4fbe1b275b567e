#include "core/process/local_runner.hpp"
#include "core/process/shell.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::proc;
using namespace std::chrono_literals;
using namespace std::string_literals;

namespace {

// Words every shell treats differently: quotes, $, backticks, backslashes (fish reads \\ and \'
// inside single quotes), ! (tcsh history), newlines (tcsh refuses them in quotes), tabs, globs,
// non-ASCII, an empty word, and printf escapes that must stay text.
const std::vector<std::string> k_words = {
    "plain", "a b",    "it's",   "\"dq\"",   "$HOME",    "${x}",           "`id`",  "$(id)",       "back\\slash",
    "\\\\",  "tail\\", "\\'",    "!!",       "!$",       "line1\nline2\n", "\ttab", "*?[a]{b,c}~", "-e",
    "",      "%s%%",   "\\0101", "ñ 日本 €", "\x01\x7f", ";|&<>#",         "=x"};

// What `printf '%s\0' WORDS...` prints.
std::string nul_joined(const std::vector<std::string>& words)
{
  std::string out;
  for (const auto& w : words) {
    out += w;
    out += '\0';
  }
  return out;
}

} // namespace

TEST_CASE("shell: login_shell_command reaches /bin/sh intact through sh, bash, fish and tcsh")
{
  std::vector<std::string> argv = {"printf", "%s\\0"};
  argv.insert(argv.end(), k_words.begin(), k_words.end());
  const auto line = login_shell_command(argv);
  // The login shell sees only one kind of word: single-quoted printable ASCII without ' \ or !
  // except \0ooo escapes inside the payload.
  CHECK(line.starts_with("exec /bin/sh -c 'eval \"$(printf %b \"$1\")\"' rv '"));
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('!') == std::string::npos);
  LocalRunner local;
  int shells = 0;
  for (std::string shell : {"sh", "bash", "fish", "tcsh", "zsh", "dash"}) {
    if (!on_path(shell)) {
      MESSAGE("SKIP: " << shell << " is not installed");
      continue;
    }
    ++shells;
    Command c;
    // As sshd runs a command: the user's shell with -c and the line.
    c.argv = {shell, "-c", line};
    c.timeout = 20s;
    auto o = local.run(c);
    REQUIRE(o);
    CAPTURE(shell);
    CAPTURE(o->err);
    CHECK(o->exit_code == 0);
    CHECK(o->out == nul_joined(k_words));
  }
  CHECK(shells >= 2);
}

TEST_CASE("shell: login_shell_command keeps the exit status and stdin")
{
  LocalRunner local;
  Command c;
  c.argv = {"sh", "-c", login_shell_command({"sh", "-c", "cat; exit 7"})};
  c.stdin_data = "in\0put\n"s;
  c.timeout = 20s;
  auto o = local.run(c);
  REQUIRE(o);
  CHECK(o->exit_code == 7);
  CHECK(o->out == "in\0put\n"s);
}

TEST_CASE("batch: stdin with NUL bytes and backslashes reaches the command byte for byte")
{
  LocalRunner r;
  Command c;
  c.argv = {"cat"};
  c.timeout = 20s;
  std::string data = "a\0b\0\0c\\0101\\n\\\\'%b%s\n"s;
  for (int i = 0; i < 256; ++i) {
    data += static_cast<char>(i);
  }
  data += "\0"s;
  c.stdin_data = data;
  Command second;
  second.argv = {"od", "-An", "-c"};
  second.stdin_data = "x\0y"s;
  second.timeout = 20s;
  auto outs = r.run_batch({c, second});
  REQUIRE(outs);
  REQUIRE(outs->size() == 2);
  CHECK((*outs)[0].exit_code == 0);
  CHECK((*outs)[0].out.size() == data.size());
  CHECK((*outs)[0].out == data);
  CHECK((*outs)[1].out.find("x  \\0   y") != std::string::npos);
}

TEST_CASE("batch_exec: a batch without stdin rides in the exec line and runs through every login shell")
{
  std::vector<std::string> argv = {"printf", "%s\\0"};
  argv.insert(argv.end(), k_words.begin(), k_words.end());
  Command words;
  words.argv = argv;
  Command failing;
  failing.argv = {"sh", "-c", "echo 'to stderr' >&2; exit 3"};
  failing.concurrent = true;
  const auto batch = batch_exec({words, failing});
  CHECK(batch.input.empty());
  CHECK(batch.line.starts_with("exec /bin/sh -c 'eval \"$(printf %b \"$1\")\"' rv '"));
  CHECK(batch.line.find('\n') == std::string::npos);
  CHECK(batch.line.find('!') == std::string::npos);
  LocalRunner local;
  int shells = 0;
  for (std::string shell : {"sh", "bash", "fish", "tcsh"}) {
    if (!on_path(shell)) {
      MESSAGE("SKIP: " << shell << " is not installed");
      continue;
    }
    ++shells;
    Command c;
    c.argv = {shell, "-c", batch.line}; // as sshd runs it, with nothing on stdin
    c.stdin_data = "";
    c.timeout = 20s;
    auto o = local.run(c);
    REQUIRE(o);
    CAPTURE(shell);
    CAPTURE(o->err);
    auto outs = parse_batch_output(o->out, 2);
    REQUIRE(outs);
    CHECK((*outs)[0].exit_code == 0);
    CHECK((*outs)[0].out == nul_joined(k_words));
    CHECK((*outs)[1].exit_code == 3);
    CHECK((*outs)[1].err == "to stderr\n");
  }
  CHECK(shells >= 2);
}

TEST_CASE("batch_exec: stdin_data anywhere, or a line past the limit, sends the script on stdin")
{
  Command plain;
  plain.argv = {"true"};
  Command secret;
  secret.argv = {"cat"};
  secret.stdin_data = "export TOKEN=s3cret\n";
  const auto with_input = batch_exec({plain, secret});
  CHECK(with_input.line == "exec /bin/sh -s");
  CHECK(with_input.input == batch_script({plain, secret}));
  CHECK(with_input.line.find("s3cret") == std::string::npos);

  Command big;
  big.argv = {"echo", std::string(k_batch_line_max, 'x')};
  const auto too_long = batch_exec({plain, big});
  CHECK(too_long.line == "exec /bin/sh -s");
  CHECK(too_long.input == batch_script({plain, big}));

  // Just under: escapes count (a newline is 5 bytes in the line), the limit is the line's.
  const auto small = batch_exec({plain});
  CHECK(small.input.empty());
  CHECK(small.line.size() <= k_batch_line_max);
}
