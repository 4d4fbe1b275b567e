#include "cli/help.hpp"

#include "core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <sys/ioctl.h>
#include <unistd.h>

namespace rv::cli {
namespace {

// "rv sync push" for the App of `push`.
std::string path_of(const CLI::App& app)
{
  std::vector<std::string> names;
  for (const auto* a = &app; a != nullptr; a = a->get_parent()) {
    names.insert(names.begin(), a->get_name());
  }
  return text::join(names, " ");
}

const CLI::App& root_of(const CLI::App& app)
{
  const auto* a = &app;
  while (a->get_parent() != nullptr) {
    a = a->get_parent();
  }
  return *a;
}

std::string names_of(const OptionSpec& o)
{
  std::string out = text::join(o.names, ", ");
  if (o.names.size() == 1 && o.names[0].starts_with("--")) {
    out = "    " + out; // long-only flags line up under the long names of "-g, --gpu"
  }
  return o.value.empty() ? out : out + " " + o.value;
}

// Two columns: the left as it is, the right wrapped beside it; a left column wider than a third
// of the width puts its text on the next line.
std::string rows(const std::vector<std::pair<std::string, std::string>>& items, std::size_t width)
{
  std::size_t left = 0;
  for (const auto& [l, r] : items) {
    if (l.size() + 4 <= width / 3) {
      left = std::max(left, l.size());
    }
  }
  const std::size_t column = 2 + left + 2;
  std::string out;
  for (const auto& [l, r] : items) {
    if (r.empty()) {
      out += "  " + l + "\n";
    } else if (l.size() <= left) {
      out += fmt::format("  {:<{}}  {}\n", l, left, wrap(r, width - column, column));
    } else {
      out += "  " + l + "\n" + std::string(column, ' ') + wrap(r, width - column, column) + "\n";
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> option_rows(const std::vector<OptionSpec>& options)
{
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& o : options) {
    if (std::find(o.names.begin(), o.names.end(), "--version") == o.names.end()) {
      out.emplace_back(names_of(o), o.description);
    }
  }
  return out;
}

std::string section(const std::string& title, const std::string& body)
{
  return body.empty() ? "" : "\n" + title + ":\n" + body;
}

// As gh shows them: what it does, then the command line to copy.
std::string examples_section(const std::vector<Example>& examples, std::size_t width)
{
  std::string body;
  for (const auto& [cmd, what] : examples) {
    body += (body.empty() ? "" : "\n") + std::string("  # ") + wrap(what, width - 4, 4) + "\n  $ " + cmd + "\n";
  }
  return section("Examples", body);
}

std::string top_help(const CLI::App& app, const CommandSpec& rv, std::size_t width)
{
  std::string out = wrap(rv.description, width, 0) + "\n";
  out += section("Usage", "  rv [OPTIONS] COMMAND\n");
  std::vector<std::string> placed;
  auto describe = [&](const std::string& name) {
    for (const auto& s : rv.subcommands) {
      if (s.name == name) {
        return s.description;
      }
    }
    return std::string();
  };
  for (const auto& [group, names] : command_groups()) {
    std::vector<std::pair<std::string, std::string>> items;
    for (const auto& n : names) {
      if (find_subcommand(app, n) != nullptr) {
        items.emplace_back(n, describe(n));
        placed.push_back(n);
      }
    }
    out += section(group, rows(items, width));
  }
  std::vector<std::pair<std::string, std::string>> others;
  for (const auto& s : rv.subcommands) {
    if (std::find(placed.begin(), placed.end(), s.name) == placed.end()) {
      others.emplace_back(s.name, s.description);
    }
  }
  out += section("Other commands", rows(others, width));
  out += section("Options (before or after the command)", rows(option_rows(rv.options), width));
  out += examples_section(usage_examples(), width);
  out += section("Learn more", rows({{"rv help COMMAND", "a command's options and examples (or rv COMMAND --help)"},
                                     {"rv man | man -l -", "the manual page"},
                                     {"docs/", "one page per feature in rv's source (README.md first)"}},
                                    width));
  return out;
}

std::string command_help(const CLI::App& app, std::size_t width)
{
  const auto path = path_of(app);
  const auto c = spec_of(app);
  std::string out = wrap(c.description, width, 0) + "\n";
  out += section("Usage", "  " + wrap(usage_line(c, path), width - 2, 4) + "\n");
  std::vector<std::pair<std::string, std::string>> subs;
  for (const auto& s : c.subcommands) {
    subs.emplace_back(s.name, s.description);
  }
  out += section("Commands", rows(subs, width));
  out += section("Options", rows(option_rows(c.options), width));
  const auto globals = spec_of(root_of(app));
  out += section("Global options (before or after the command)", rows(option_rows(globals.options), width));
  out += examples_section(examples_of(path.substr(3)), width);
  if (!app.get_footer().empty()) { // prose: one paragraph, wrapped like the rest
    auto footer = app.get_footer();
    std::replace(footer.begin(), footer.end(), '\n', ' ');
    out += "\n" + wrap(footer, width, 0) + "\n";
  }
  return out;
}

class RvFormatter : public CLI::FormatterBase {
public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override
  {
    return help_text(*app, terminal_width());
  }
};

} // namespace

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name)
{
  for (const auto* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) {
      return sub;
    }
  }
  return nullptr;
}

std::string wrap(const std::string& text, std::size_t width, std::size_t indent)
{
  width = std::max<std::size_t>(width, 20);
  std::string out;
  for (auto paragraph : text::split(text, "\n")) {
    if (!out.empty()) {
      out += "\n" + std::string(indent, ' ');
    }
    std::size_t used = 0;
    for (auto word : text::split_ws(paragraph)) {
      if (used > 0 && used + 1 + word.size() > width) {
        out += "\n" + std::string(indent, ' ');
        used = 0;
      } else if (used > 0) {
        out += ' ';
        ++used;
      }
      out += word;
      used += word.size();
    }
  }
  return out;
}

std::size_t terminal_width()
{
  std::size_t width = 80;
  winsize ws{};
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && std::atoi(columns) > 0) {
    width = static_cast<std::size_t>(std::atoi(columns));
  } else if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    width = ws.ws_col;
  }
  return std::clamp<std::size_t>(width, 40, 120);
}

std::string help_text(const CLI::App& app, std::size_t width)
{
  return app.get_parent() == nullptr ? top_help(app, spec_of(app), width) : command_help(app, width);
}

std::vector<Example> examples_of(const std::string& path)
{
  std::vector<Example> out;
  const auto prefix = "rv " + path;
  for (const auto& e : command_examples()) {
    if (e.first == prefix || e.first.starts_with(prefix + " ")) {
      out.push_back(e);
    }
  }
  return out;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& command_groups()
{
  static const std::vector<std::pair<std::string, std::vector<std::string>>> groups = {
      {"Start here", {"init", "doctor", "status", "connect", "disconnect"}},
      {"Run", {"run", "up", "exec", "cost"}},
      {"Watch", {"ps", "logs", "why", "gpu", "stats"}},
      {"Manage", {"stop", "ssh", "forward", "sync"}},
      {"Set up", {"config", "env", "completion", "man", "help", "version"}},
  };
  return groups;
}

const std::vector<Example>& command_examples()
{
  static const std::vector<Example> examples = {
      {"rv init", "asks for the login node and sets up key, account, scratch and config"},
      {"rv init -H login.example.edu --user ada --non-interactive -y", "the same, every answer from a flag"},
      {"rv doctor", "checks the set-up end to end, a short test job included"},
      {"rv doctor --quick", "the checks without the test job"},
      {"rv status", "free GPUs per partition, your requests, fair share and limits"},
      {"rv connect", "log in once (a second factor typed here); later commands reuse the connection"},
      {"rv connect --status", "the held connections"},
      {"rv disconnect", "end the held connection"},
      {"rv run -f -g 1 --time 2h -- python train.py --lr 3e-4", "sync the project, fan out, follow the winner"},
      {"rv run -g 4 -t a100 --time 1d -o results python train.py", "submit and return; fetch results later"},
      {"rv run --dry-run -g 2 --time 3h python train.py", "the ranked strategies; nothing is submitted"},
      {"rv run -f", "no command: the project's rv.toml (its command, resources, env, setup, outputs)"},
      {"rv run --gpu 4 --dry-run eval.toml", "a task file's plan, its gpus overridden by the flag"},
      {"rv run --after 3f9c02ab python eval.py", "start once request 3f9c02ab has succeeded (:any: ended)"},
      {"rv init --task-file", "write a commented example rv.toml in the project"},
      {"rv run -g 1 --time 30m --array 0-15%4 -- python train.py --seed {task}",
       "a study: 16 tasks, at most 4 at once, on whichever GPUs start first (docs/studies.md)"},
      {"rv run -f -g 1 --time 1h --sweep lr=1e-4,3e-4 --sweep model=small,base -- python train.py --lr {lr}",
       "a sweep's 4 tasks, each output line prefixed [task], a table at the end"},
      {"rv up -g 1 --time 1h", "race an allocation, then a shell on the winning node"},
      {"rv up -g 1 --time 30m --run 'python eval.py'", "a command in an allocation, as rv run -f would"},
      {"rv up --dry-run -g 2 --time 3h", "discover, probe backfill windows, show the ranked strategies"},
      {"rv up --keep -g 1 --time 2h", "hold an allocation without a shell (for rv run --in); rv stop ends it"},
      {"rv run --in 3f9c02ab -f python eval.py", "a command as a step of the allocation 3f9c02ab holds, synced"},
      {"rv run --in 3f9c02ab --one python eval.py", "started on one node; returns (rv logs 3f9c02ab/step-N)"},
      {"rv exec sinfo", "run a command on the login node"},
      {"rv exec 'squeue -u $USER | wc -l'", "one argument is a shell command line"},
      {"rv cost -g 4 --time 1d", "SU of a request on each GPU type"},
      {"rv ps", "active requests and their sibling jobs"},
      {"rv ps -a", "ended ones too"},
      {"rv ps 3f9c02ab", "one request and its rv run --in steps"},
      {"rv logs 3f9c02ab", "the winner's log; a failed job's error output first"},
      {"rv logs -f train", "follow the newest request named train"},
      {"rv logs 3f9c02ab/step-2", "the output of one rv run --in step"},
      {"rv logs 3f9c02ab/7", "task 7 of a study (or 3f9c02ab:7)"},
      {"rv ps 3f9c02ab", "one request; a study's tasks and workers"},
      {"rv why", "why the newest pending request waits, and what starts sooner"},
      {"rv gpu --watch", "the GPUs of the newest running request, every 2 s"},
      {"rv stats --days 7", "how long your requests waited and ran this week"},
      {"rv stop 3f9c02ab", "cancel the request and all its jobs"},
      {"rv stop --all --yes", "cancel every active request"},
      {"rv stop 3f9c02ab/step-2", "stop one rv run --in step; the allocation stays"},
      {"rv ssh", "a shell on the newest running request's node"},
      {"rv ssh 3f9c02ab -- nvidia-smi", "one command there"},
      {"rv ssh --print-config --install", "then: ssh rv-3f9c02ab, or VS Code Remote-SSH"},
      {"rv forward 8888", "Jupyter on the newest running request: http://127.0.0.1:8888"},
      {"rv forward 6006 3f9c02ab --local-port 16006", "TensorBoard of one request on another local port"},
      {"rv forward --list", "the forwards running in the background (--stop 8888 ends one)"},
      {"rv sync push --dry-run", "what a push sends and deletes"},
      {"rv sync pull 3f9c02ab", "fetch a request's -o outputs"},
      {"rv sync watch", "push again whenever a file changes"},
      {"rv config show", "every setting and where it came from"},
      {"rv config set host login.example.edu", "the default login node"},
      {"rv config unset max_strategies", "back to the default"},
      {"rv env set HF_TOKEN", "a secret every job gets, read from stdin"},
      {"rv env list", "the secrets' names (never their values)"},
      {"rv env rm HF_TOKEN", "remove a secret"},
      {"rv env import .env", "every KEY=VALUE line of a file"},
      {"rv completion bash > ~/.local/share/bash-completion/completions/rv", "bash completion"},
      {"rv completion zsh > ~/.zfunc/_rv", "zsh completion (with fpath+=~/.zfunc)"},
      {"rv completion fish > ~/.config/fish/completions/rv.fish", "fish completion"},
      {"rv man | man -l -", "read the manual page"},
      {"rv help run", "the options and examples of rv run"},
      {"rv version", "rv's version, commit, build date, target and Kerberos support"},
  };
  return examples;
}

void use_rv_help(CLI::App& app)
{
  auto formatter = std::make_shared<RvFormatter>();
  for (auto* sub : app.get_subcommands({})) {
    for (const auto& [group, names] : command_groups()) {
      if (std::find(names.begin(), names.end(), sub->get_name()) != names.end()) {
        sub->group(group);
      }
    }
  }
  std::function<void(CLI::App&)> apply = [&](CLI::App& a) {
    a.formatter(formatter);
    for (auto* sub : a.get_subcommands({})) {
      apply(*sub);
    }
  };
  apply(app);
}

} // namespace rv::cli
