#pragma once
// The user's command line read as `sh` reads it, once for every folder (docs/sync.md, "The command
// line"): words with POSIX quoting, comments, line continuations, operators and redirections.
// Not an interpreter: `$x`, `$(...)`, `${...}` and backquotes stay in their word as typed, and a
// heredoc's body is read as more lines.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rv::command {

enum class TokenKind {
  word,     // a word, its quotes removed
  control,  // `;`, `&`, `&&`, `|`, `||`, `|&`, `(`, `)` or a newline ("\n"): ends a simple command
  redirect, // `<`, `>`, `>>`, `<<`, `<<-`, `<&`, `>&`, `<>`, `>|`, `&>`, `&>>`, with a leading fd (`2>&`)
};

struct Token {
  TokenKind kind = TokenKind::word;
  std::string text;      // the word without its quotes, or the operator as written
  std::size_t begin = 0; // where the token starts in the line
  std::size_t end = 0;   // just after its last character (a closing quote included)
};

// Every token of `line`, in order. Quotes and backslashes as `sh` reads them (`'...'` literal;
// in `"..."` a backslash escapes only `$`, backquote, `"`, `\` and newline); `\` + newline is a
// line continuation and disappears; `#` at the start of a word starts a comment that runs to the
// end of the line. An unterminated quote runs to the end of the line.
std::vector<Token> tokenize(std::string_view line);

// The texts of `tokenize(line)`: words and operators alike (`a && b` -> {"a", "&&", "b"}).
std::vector<std::string> split_words(std::string_view line);

// One simple command of a line: its words (the argv as typed, assignments and wrappers
// included) and the targets of its redirections (`> log`, `< in`: files, not arguments).
struct SimpleCommand {
  std::vector<Token> words;
  std::vector<Token> redirects;
  std::vector<std::string> argv() const; // the texts of `words`
};

// The simple commands of `line`, split at control operators; empty ones are dropped.
std::vector<SimpleCommand> simple_commands(std::string_view line);

// `NAME=value` with a POSIX name (a letter or `_`, then letters, digits, `_`).
bool is_assignment(std::string_view word);

} // namespace rv::command
