#include "core/command/words.hpp"

#include <algorithm>

namespace rv::command {
namespace {

bool is_blank(char c)
{
  return c == ' ' || c == '\t';
}

bool is_control_char(char c)
{
  return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '\n';
}

bool is_redirect_char(char c)
{
  return c == '<' || c == '>';
}

struct Lexer {
  std::string_view s;
  std::size_t i = 0;
  std::vector<Token> out;

  // Copies `$(...)` / `$((...))` with nested parentheses and quotes, `${...}` or a backquoted
  // command into `text` as written, starting at s[i]; leaves i after it.
  void substitution(std::string& text)
  {
    const std::size_t start = i;
    if (s[i] == '`') {
      for (++i; i < s.size() && s[i] != '`'; ++i) {
        i += s[i] == '\\' && i + 1 < s.size() ? 1U : 0U;
      }
    } else {
      const char open = s[i + 1];
      const char close = open == '(' ? ')' : '}';
      int depth = 0;
      for (i += 1; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '\\') {
          ++i;
        } else if (c == '\'' && open == '(') {
          i = std::min(s.find('\'', i + 1), s.size());
        } else if (c == '"') {
          for (++i; i < s.size() && s[i] != '"'; ++i) {
            i += s[i] == '\\' ? 1U : 0U;
          }
        } else if (c == open) {
          ++depth;
        } else if (c == close && --depth == 0) {
          break;
        }
      }
    }
    i = std::min(i + 1, s.size());
    text.append(s.substr(start, i - start));
  }

  bool at_substitution() const
  {
    return s[i] == '`' || (s[i] == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{'));
  }

  void double_quoted(std::string& text)
  {
    for (++i; i < s.size() && s[i] != '"';) {
      const char c = s[i];
      if (c == '\\' && i + 1 < s.size() && std::string_view("$`\"\\\n").find(s[i + 1]) != std::string_view::npos) {
        if (s[i + 1] != '\n') {
          text += s[i + 1];
        }
        i += 2;
      } else if (at_substitution()) {
        substitution(text);
      } else {
        text += c;
        ++i;
      }
    }
    i = std::min(i + 1, s.size());
  }

  void word()
  {
    Token t{TokenKind::word, {}, i, i};
    bool plain_digits = true; // so far only unquoted digits: the fd of a redirection (`2>`)
    while (i < s.size()) {
      const char c = s[i];
      if (is_blank(c) || is_control_char(c) || is_redirect_char(c)) {
        break;
      }
      if (c == '\'') {
        const auto close = s.find('\'', i + 1);
        t.text.append(s.substr(i + 1, close == std::string_view::npos ? std::string_view::npos : close - i - 1));
        i = close == std::string_view::npos ? s.size() : close + 1;
        plain_digits = false;
      } else if (c == '"') {
        double_quoted(t.text);
        plain_digits = false;
      } else if (c == '\\' && i + 1 < s.size()) {
        if (s[i + 1] != '\n') { // `\` + newline: a line continuation
          t.text += s[i + 1];
        }
        i += 2;
        plain_digits = false;
      } else if (at_substitution()) {
        substitution(t.text);
        plain_digits = false;
      } else {
        plain_digits = plain_digits && c >= '0' && c <= '9';
        t.text += c;
        ++i;
      }
    }
    t.end = i;
    if (i < s.size() && is_redirect_char(s[i]) && plain_digits && !t.text.empty()) {
      redirect(t.begin, t.text); // `2>file`: the digits are the redirection's fd
      return;
    }
    out.push_back(std::move(t));
  }

  void redirect(std::size_t begin, std::string text)
  {
    const char first = s[i];
    text += s[i++];
    if (i < s.size()) {
      const char c = s[i];
      if (c == first || c == '&' || (first == '<' && c == '>') || (first == '>' && c == '|')) {
        text += c;
        ++i;
        if (first == '<' && c == '<' && i < s.size() && s[i] == '-') {
          text += s[i++]; // <<-
        }
      }
    }
    out.push_back({TokenKind::redirect, std::move(text), begin, i});
  }

  void control()
  {
    const std::size_t begin = i;
    const char c = s[i++];
    std::string text(1, c);
    if (c == '&' && i < s.size() && s[i] == '>') { // &> and &>>: a redirection
      text += s[i++];
      if (i < s.size() && s[i] == '>') {
        text += s[i++];
      }
      out.push_back({TokenKind::redirect, std::move(text), begin, i});
      return;
    }
    if ((c == '&' || c == '|') && i < s.size() && (s[i] == c || (c == '|' && s[i] == '&'))) {
      text += s[i++];
    }
    out.push_back({TokenKind::control, std::move(text), begin, i});
  }

  void run()
  {
    while (i < s.size()) {
      const char c = s[i];
      if (is_blank(c)) {
        ++i;
      } else if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
        i += 2; // a line continuation between words
      } else if (c == '#') {
        i = std::min(s.find('\n', i), s.size()); // a comment; its newline still ends the command
      } else if (is_control_char(c)) {
        control();
      } else if (is_redirect_char(c)) {
        redirect(i, {});
      } else {
        word();
      }
    }
  }
};

bool is_name_start(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

} // namespace

std::vector<Token> tokenize(std::string_view line)
{
  Lexer lexer{line, 0, {}};
  lexer.run();
  return std::move(lexer.out);
}

std::vector<std::string> split_words(std::string_view line)
{
  std::vector<std::string> words;
  for (auto& t : tokenize(line)) {
    words.push_back(std::move(t.text));
  }
  return words;
}

std::vector<std::string> SimpleCommand::argv() const
{
  std::vector<std::string> out;
  out.reserve(words.size());
  for (const auto& w : words) {
    out.push_back(w.text);
  }
  return out;
}

std::vector<SimpleCommand> simple_commands(std::string_view line)
{
  std::vector<SimpleCommand> commands(1);
  const auto tokens = tokenize(line);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (t.kind == TokenKind::control) {
      if (!commands.back().words.empty() || !commands.back().redirects.empty()) {
        commands.emplace_back();
      }
    } else if (t.kind == TokenKind::redirect) {
      if (i + 1 < tokens.size() && tokens[i + 1].kind == TokenKind::word) {
        commands.back().redirects.push_back(tokens[++i]);
      }
    } else {
      commands.back().words.push_back(t);
    }
  }
  if (commands.back().words.empty() && commands.back().redirects.empty()) {
    commands.pop_back();
  }
  return commands;
}

bool is_assignment(std::string_view word)
{
  const auto eq = word.find('=');
  if (eq == 0 || eq == std::string_view::npos || !is_name_start(word.front())) {
    return false;
  }
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](char c) { return is_name_start(c) || (c >= '0' && c <= '9'); });
}

} // namespace rv::command
