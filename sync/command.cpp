#include "sync/command.hpp"

#include "core/command/grammar.hpp"
#include "core/command/words.hpp"

#include <algorithm>

namespace rv::sync {
namespace {

using Words = std::vector<std::string>;

bool has_ext(std::string_view word, std::initializer_list<std::string_view> exts)
{
  return std::any_of(exts.begin(), exts.end(), [&](std::string_view e) { return word.ends_with(e); });
}

// A module name `a.b.c` resolves to a/b/c.py, a/b/c/__main__.py or a/b/c/__init__.py.
std::string module_file(const std::string& module, const ExistsFn& exists)
{
  std::string path = module;
  std::replace(path.begin(), path.end(), '.', '/');
  for (const auto& candidate : {path + ".py", path + "/__main__.py", path + "/__init__.py"}) {
    if (exists(candidate)) {
      return candidate;
    }
  }
  return {};
}

void add_unique(std::vector<std::string>& to, const std::vector<std::string>& from)
{
  for (const auto& f : from) {
    if (std::find(to.begin(), to.end(), f) == to.end()) {
      to.push_back(f);
    }
  }
}

CommandAnalysis analyze_line(std::string_view line, const ExistsFn& exists);

struct Parser {
  const ExistsFn& exists;
  CommandAnalysis a;

  void set_script(const std::string& word)
  {
    a.entry = word;
    if (exists(word)) {
      a.entry_file = word;
    }
  }
  void set_module(const std::string& name)
  {
    a.entry = name;
    a.entry_is_module = true;
    a.entry_file = module_file(name, exists);
  }

  // `bash -c LINE`: the line is read like a command line of its own.
  void sub_line(std::string_view line)
  {
    auto inner = analyze_line(line, exists);
    a.launcher = a.launcher.empty() ? inner.launcher : a.launcher;
    a.known_launcher = a.known_launcher || inner.known_launcher;
    a.entry = inner.entry;
    a.entry_is_module = inner.entry_is_module;
    a.entry_file = inner.entry_file;
    a.local_files.insert(a.local_files.end(), inner.local_files.begin(), inner.local_files.end());
    a.absolute_paths.insert(a.absolute_paths.end(), inner.absolute_paths.begin(), inner.absolute_paths.end());
  }

  // The program at w[from] (after assignments and wrappers) with its arguments.
  void program_at(const Words& w, std::size_t from)
  {
    const auto inv = command::invocation(w, from);
    if (inv.program == command::Invocation::npos) {
      return;
    }
    if (a.launcher.empty()) {
      a.launcher = inv.name;
    }
    a.known_launcher = a.known_launcher || inv.kind != command::ProgramKind::other;
    switch (inv.entry_kind) {
    case command::EntryKind::script:
      set_script(inv.entry);
      break;
    case command::EntryKind::module:
      set_module(inv.entry);
      break;
    case command::EntryKind::program:
      program_at(w, inv.entry_at); // torchrun --no_python bash run.sh
      break;
    case command::EntryKind::shell_line:
      sub_line(inv.entry);
      break;
    case command::EntryKind::command_string:
      break;
    case command::EntryKind::none:
      const auto& prog = w[inv.program];
      if (inv.kind == command::ProgramKind::other && prog.find('/') != std::string::npos && exists(prog)) {
        a.launcher.clear();
        a.known_launcher = true;
        set_script(prog); // ./train.sh
      }
      break;
    }
  }

  // A word that may name a local path (the entry included); `--opt=VALUE` and `NAME=VALUE` by their value.
  void note_path(std::string word)
  {
    if (word.starts_with("-") || command::is_assignment(word)) {
      const auto eq = word.find('=');
      if (eq == std::string::npos) {
        return;
      }
      word = word.substr(eq + 1);
    }
    if (word.empty() || word == "." || word == ".." || word.find('\n') != std::string::npos) {
      return;
    }
    if (word.front() == '/') {
      if (exists(word)) {
        a.absolute_paths.push_back(word);
      }
      return;
    }
    if (exists(word)) {
      add_unique(a.local_files, {word});
    }
  }

  void command(const Words& w)
  {
    program_at(w, 0);
    // Every word that names a local path (and every --opt=VALUE value), the entry included.
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (i == 0 && w[i].find('/') == std::string::npos) {
        continue; // the program itself, from PATH
      }
      note_path(w[i]);
    }
    // Fallback for launchers whose options we do not know: the first local .py/.sh file.
    if (a.entry.empty()) {
      for (const auto& f : a.local_files) {
        if (has_ext(f, {".py", ".sh", ".bash"})) {
          a.entry = a.entry_file = f;
          break;
        }
      }
    }
  }
};

// A command line: each simple command of a list (`cd x && python y.py`) is analysed; the first
// that names an entry gives the launcher and the entry, every one adds the local files it names
// (redirection targets included: `< data.txt`).
CommandAnalysis analyze_line(std::string_view line, const ExistsFn& exists)
{
  CommandAnalysis out;
  for (const auto& simple : command::simple_commands(line)) {
    Parser inner{exists, {}};
    inner.command(simple.argv());
    for (const auto& r : simple.redirects) {
      inner.note_path(r.text);
    }
    if (out.entry.empty()) {
      out.launcher = inner.a.launcher;
      out.known_launcher = inner.a.known_launcher;
      out.entry = inner.a.entry;
      out.entry_is_module = inner.a.entry_is_module;
      out.entry_file = inner.a.entry_file;
    }
    add_unique(out.local_files, inner.a.local_files);
    out.absolute_paths.insert(out.absolute_paths.end(), inner.a.absolute_paths.begin(), inner.a.absolute_paths.end());
  }
  return out;
}

} // namespace

CommandAnalysis analyze_command(const std::vector<std::string>& command, const ExistsFn& exists)
{
  if (command.size() == 1) {
    return analyze_line(command.front(), exists);
  }
  Parser p{exists, {}};
  p.command(command);
  return p.a;
}

std::vector<std::string> misplaced_rv_flags(const std::vector<std::string>& command,
                                            const std::vector<std::string>& rv_flags)
{
  std::vector<std::string> found;
  const auto words = command.size() == 1 ? command::split_words(command.front()) : command;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const auto name = words[i].substr(0, words[i].find('='));
    if (std::find(rv_flags.begin(), rv_flags.end(), name) != rv_flags.end() &&
        std::find(found.begin(), found.end(), name) == found.end()) {
      found.push_back(name);
    }
  }
  return found;
}

} // namespace rv::sync
