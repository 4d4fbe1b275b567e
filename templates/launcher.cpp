#include "templates/launcher.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace rv::templates {
namespace {

// One shell word of the user's command: where it ends in the text, and its value with quote
// characters removed (good enough to recognise launcher names and flags).
struct Word {
  std::size_t end = 0;
  std::string value;
};

using SimpleCommand = std::vector<Word>;

bool is_operator_char(char c)
{
  return c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')';
}

// Splits a shell command line into simple commands. Understands quotes, backslashes and
// comments; anything fancier (heredocs, `$(...)` nesting) is only skipped over word-wise.
std::vector<SimpleCommand> split_commands(std::string_view text)
{
  std::vector<SimpleCommand> commands(1);
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (is_operator_char(c)) {
      if (!commands.back().empty()) {
        commands.emplace_back();
      }
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') {
        ++i;
      }
      continue;
    }
    Word word;
    char quote = 0;
    while (i < text.size()) {
      c = text[i];
      if (quote == '\'') {
        if (c == '\'') {
          quote = 0;
        } else {
          word.value += c;
        }
      } else if (c == '\\' && i + 1 < text.size() && quote == 0 && text[i + 1] == '\n') {
        ++i; // line continuation
      } else if (c == '\\' && i + 1 < text.size()) {
        word.value += text[++i];
      } else if (quote == '"') {
        if (c == '"') {
          quote = 0;
        } else {
          word.value += c;
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == ' ' || c == '\t' || is_operator_char(c)) {
        break;
      } else {
        word.value += c;
      }
      ++i;
    }
    word.end = i;
    commands.back().push_back(std::move(word));
  }
  return commands;
}

std::string_view basename(std::string_view path)
{
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_assignment(std::string_view word)
{
  auto eq = word.find('=');
  if (eq == 0 || eq == std::string_view::npos) {
    return false;
  }
  if (std::isdigit(static_cast<unsigned char>(word[0]))) {
    return false;
  }
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// python, python3, python3.11, /path/to/python3 ...
bool is_python(std::string_view word)
{
  auto name = basename(word);
  if (!name.starts_with("python")) {
    return false;
  }
  name.remove_prefix(6);
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

// Normalises `--master-port=1` to `--master_port`.
std::string flag_name(std::string_view word)
{
  std::string name(word.substr(0, word.find('=')));
  std::replace(name.begin(), name.end(), '-', '_');
  name.replace(0, std::min<std::size_t>(2, name.size()), "--");
  return name;
}

struct Flag {
  const char* name;              // as injected
  const char* value;             // shell text after `=`; "" = a switch
  std::vector<const char*> also; // other flags that make this one unnecessary
};

std::vector<Flag> flags_for(LauncherKind kind, bool multi_node)
{
  switch (kind) {
  case LauncherKind::torchrun:
    if (!multi_node) {
      return {{"--master_port", "\"$MASTER_PORT\"", {"--rdzv_endpoint", "--standalone"}}};
    }
    return {{"--nnodes", "\"$RV_NNODES\"", {}},
            {"--node_rank", "\"$NODE_RANK\"", {"--rdzv_endpoint"}},
            {"--master_addr", "\"$MASTER_ADDR\"", {"--rdzv_endpoint"}},
            {"--master_port", "\"$MASTER_PORT\"", {"--rdzv_endpoint"}}};
  case LauncherKind::accelerate:
    if (!multi_node) {
      return {{"--main_process_port", "\"$MASTER_PORT\"", {}}};
    }
    return {{"--num_machines", "\"$RV_NNODES\"", {}},
            {"--machine_rank", "\"$NODE_RANK\"", {}},
            {"--main_process_ip", "\"$MASTER_ADDR\"", {}},
            {"--main_process_port", "\"$MASTER_PORT\"", {}}};
  case LauncherKind::deepspeed:
    if (!multi_node) {
      return {{"--master_port", "\"$MASTER_PORT\"", {}}};
    }
    return {{"--num_nodes", "\"$RV_NNODES\"", {}},
            {"--node_rank", "\"$NODE_RANK\"", {}},
            {"--master_addr", "\"$MASTER_ADDR\"", {}},
            {"--master_port", "\"$MASTER_PORT\"", {}},
            {"--no_ssh", "", {"--hostfile", "--launcher", "--include", "--exclude"}}};
  case LauncherKind::none:
    break;
  }
  return {};
}

struct Found {
  LauncherKind kind = LauncherKind::none;
  std::size_t insert_at = 0; // offset in the text, just after the launcher words
  std::size_t first_arg = 0; // index of the first word after the launcher words
};

Found find_launcher(const SimpleCommand& cmd)
{
  std::size_t i = 0;
  constexpr std::array<std::string_view, 4> wrappers{"env", "exec", "command", "nohup"};
  while (i < cmd.size() &&
         (is_assignment(cmd[i].value) || std::find(wrappers.begin(), wrappers.end(), cmd[i].value) != wrappers.end())) {
    ++i;
  }
  if (i >= cmd.size()) {
    return {};
  }
  auto name = basename(cmd[i].value);
  if (name == "torchrun") {
    return {LauncherKind::torchrun, cmd[i].end, i + 1};
  }
  if (name == "deepspeed") {
    return {LauncherKind::deepspeed, cmd[i].end, i + 1};
  }
  if (name == "accelerate" && i + 1 < cmd.size() && cmd[i + 1].value == "launch") {
    return {LauncherKind::accelerate, cmd[i + 1].end, i + 2};
  }
  if (is_python(cmd[i].value) && i + 2 < cmd.size() && cmd[i + 1].value == "-m" &&
      (cmd[i + 2].value == "torch.distributed.run" || cmd[i + 2].value == "torch.distributed.launch")) {
    return {LauncherKind::torchrun, cmd[i + 2].end, i + 3};
  }
  return {};
}

} // namespace

const char* to_string(LauncherKind kind)
{
  switch (kind) {
  case LauncherKind::none:
    return "none";
  case LauncherKind::torchrun:
    return "torchrun";
  case LauncherKind::accelerate:
    return "accelerate";
  case LauncherKind::deepspeed:
    return "deepspeed";
  }
  return "none";
}

LauncherInjection inject_launcher_flags(std::string_view command, bool multi_node)
{
  LauncherInjection out;
  std::vector<std::pair<std::size_t, std::string>> inserts; // offset, text
  for (const auto& cmd : split_commands(command)) {
    auto found = find_launcher(cmd);
    if (found.kind == LauncherKind::none) {
      continue;
    }
    if (out.kind == LauncherKind::none) {
      out.kind = found.kind;
    }
    std::vector<std::string> given;
    for (std::size_t i = found.first_arg; i < cmd.size(); ++i) {
      if (cmd[i].value.ends_with(".py")) {
        break;
      }
      if (cmd[i].value.starts_with("--")) {
        given.push_back(flag_name(cmd[i].value));
      }
    }
    auto is_given = [&](std::string_view flag) { return std::find(given.begin(), given.end(), flag) != given.end(); };
    std::string text;
    for (const auto& flag : flags_for(found.kind, multi_node)) {
      if (is_given(flag.name) ||
          std::any_of(flag.also.begin(), flag.also.end(), [&](const char* f) { return is_given(f); })) {
        continue;
      }
      text += ' ';
      text += flag.name;
      if (*flag.value != '\0') {
        text += '=';
        text += flag.value;
      }
      if (std::find(out.injected.begin(), out.injected.end(), flag.name) == out.injected.end()) {
        out.injected.emplace_back(flag.name);
      }
    }
    if (!text.empty()) {
      inserts.emplace_back(found.insert_at, std::move(text));
    }
  }
  out.command = std::string(command);
  for (auto it = inserts.rbegin(); it != inserts.rend(); ++it) {
    out.command.insert(it->first, it->second);
  }
  return out;
}

} // namespace rv::templates
