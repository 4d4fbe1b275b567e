#include "sync/command.hpp"

#include <algorithm>
#include <set>

namespace rv::sync {
namespace {

using Words = std::vector<std::string>;

bool is_python(std::string_view prog)
{
  if (prog == "python" || prog == "python3") {
    return true;
  }
  // python3.11, python3.12t
  return prog.starts_with("python3.") && prog.size() > 8;
}

std::string_view base_name(std::string_view word)
{
  auto slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

bool has_ext(std::string_view word, std::initializer_list<std::string_view> exts)
{
  return std::any_of(exts.begin(), exts.end(), [&](std::string_view e) { return word.ends_with(e); });
}

bool is_assignment(std::string_view w)
{
  auto eq = w.find('=');
  if (eq == std::string_view::npos || eq == 0 || w.front() == '-') {
    return false;
  }
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A launcher's options: those that take the next word as their value. Anything else starting
// with '-' is a flag; `--opt=value` carries its value.
struct OptionTable {
  std::set<std::string, std::less<>> with_value;
  std::set<std::string, std::less<>> flags;        // used when `unknown_takes_value`
  bool unknown_takes_value = false;                // accelerate, deepspeed: most options take a value
  std::set<std::string, std::less<>> module_flags; // the entry is a module (`-m`, `--module`)
  std::set<std::string, std::less<>> no_python;    // the entry is a program, not a script
};

const OptionTable& torchrun_options()
{
  static const OptionTable t{{"--nnodes",
                              "--nproc_per_node",
                              "--nproc-per-node",
                              "--node_rank",
                              "--node-rank",
                              "--master_addr",
                              "--master-addr",
                              "--master_port",
                              "--master-port",
                              "--rdzv_backend",
                              "--rdzv-backend",
                              "--rdzv_endpoint",
                              "--rdzv-endpoint",
                              "--rdzv_id",
                              "--rdzv-id",
                              "--rdzv_conf",
                              "--rdzv-conf",
                              "--max_restarts",
                              "--max-restarts",
                              "--monitor_interval",
                              "--monitor-interval",
                              "--start_method",
                              "--start-method",
                              "--role",
                              "--log_dir",
                              "--log-dir",
                              "-r",
                              "--redirects",
                              "-t",
                              "--tee",
                              "--local_addr",
                              "--local-addr",
                              "--logs_specs",
                              "--logs-specs",
                              "--local_ranks_filter",
                              "--local-ranks-filter",
                              "--event_log_handler",
                              "--event-log-handler",
                              "--rdzv_timeout",
                              "--rdzv-timeout",
                              "--signals_to_handle",
                              "--signals-to-handle"},
                             {},
                             false,
                             {"-m", "--module"},
                             {"--no_python", "--no-python"}};
  return t;
}

const OptionTable& accelerate_options()
{
  static const OptionTable t{{},
                             {"--cpu",
                              "--multi_gpu",
                              "--tpu",
                              "--ipex",
                              "--use_xpu",
                              "--use_deepspeed",
                              "--use_fsdp",
                              "--use_megatron_lm",
                              "--use_cpu",
                              "--dynamo_use_fullgraph",
                              "--dynamo_use_dynamic",
                              "--dynamo_use_regional_compilation",
                              "--debug",
                              "-m",
                              "--module",
                              "--no_python",
                              "-q",
                              "--quiet",
                              "--same_network",
                              "--tpu_use_cluster",
                              "--tpu_use_sudo",
                              "--downcast_bf16",
                              "--enable_cpu_affinity",
                              "--monitor_interval",
                              "--fsdp_use_orig_params",
                              "--fsdp_cpu_ram_efficient_loading",
                              "--fsdp_sync_module_states",
                              "--fsdp_offload_params",
                              "--deepspeed_moe_layer_cls_names",
                              "-h",
                              "--help"},
                             true,
                             {"-m", "--module"},
                             {"--no_python"}};
  return t;
}

const OptionTable& deepspeed_options()
{
  static const OptionTable t{{},
                             {"--no_python", "--module", "--no_local_rank", "--no_ssh_check", "--force_multi",
                              "--save_pid", "--enable_each_rank_log", "--autotuning_run", "--elastic_training",
                              "--bind_cores_to_rank", "--no_ssh", "-h", "--help"},
                             true,
                             {"--module"},
                             {"--no_python"}};
  return t;
}

bool takes_value(const OptionTable& t, std::string_view opt)
{
  if (opt.find('=') != std::string_view::npos) {
    return false;
  }
  if (t.with_value.count(opt) != 0) {
    return true;
  }
  return t.unknown_takes_value && t.flags.count(opt) == 0 && t.module_flags.count(opt) == 0 &&
         t.no_python.count(opt) == 0;
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

  // After a launcher's name: its options per `t`, then the script (or module).
  void launcher_args(const Words& w, std::size_t i, const OptionTable& t)
  {
    bool module = false;
    bool program = false;
    for (; i < w.size(); ++i) {
      const auto& word = w[i];
      if (word == "--") {
        ++i;
        break;
      }
      if (word.size() > 1 && word[0] == '-') {
        const auto name = std::string_view(word).substr(0, word.find('='));
        module = module || t.module_flags.count(name) != 0;
        program = program || t.no_python.count(name) != 0;
        if (takes_value(t, word)) {
          ++i;
        }
        continue;
      }
      break;
    }
    if (i >= w.size()) {
      return;
    }
    if (module) {
      set_module(w[i]);
    } else if (program) {
      program_at(w, i);
    } else {
      set_script(w[i]);
    }
  }

  void python_args(const Words& w, std::size_t i)
  {
    for (; i < w.size(); ++i) {
      const auto& word = w[i];
      if (word == "-c" || word.starts_with("-c")) {
        return; // a command string: nothing to find
      }
      if (word == "-m" && i + 1 < w.size()) {
        const auto& module = w[i + 1];
        if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
          a.launcher = "python -m " + module;
          launcher_args(w, i + 2, torchrun_options());
        } else if (module == "accelerate.commands.launch") {
          a.launcher = "python -m " + module;
          launcher_args(w, i + 2, accelerate_options());
        } else if (module == "deepspeed.launcher.runner") {
          a.launcher = "python -m " + module;
          launcher_args(w, i + 2, deepspeed_options());
        } else {
          set_module(module);
        }
        return;
      }
      if (word.starts_with("-m") && word.size() > 2) {
        set_module(word.substr(2));
        return;
      }
      if (word == "-W" || word == "-X") {
        ++i;
        continue;
      }
      if (word.size() > 1 && word[0] == '-') {
        continue;
      }
      if (word != "-") {
        set_script(word);
      }
      return;
    }
  }

  void shell_args(const Words& w, std::size_t i)
  {
    for (; i < w.size(); ++i) {
      const auto& word = w[i];
      if (word == "-c" && i + 1 < w.size()) {
        sub_line(w[i + 1]);
        return;
      }
      if (word == "-o" || word == "+o") {
        ++i;
        continue;
      }
      if (word.size() > 1 && (word[0] == '-' || word[0] == '+')) {
        continue;
      }
      set_script(word);
      return;
    }
  }

  void sub_line(const std::string& line)
  {
    Parser inner{exists, {}};
    inner.command(split_shell_words(line));
    a.launcher = a.launcher.empty() ? inner.a.launcher : a.launcher;
    a.entry = inner.a.entry;
    a.entry_is_module = inner.a.entry_is_module;
    a.entry_file = inner.a.entry_file;
    a.local_files.insert(a.local_files.end(), inner.a.local_files.begin(), inner.a.local_files.end());
    a.absolute_paths.insert(a.absolute_paths.end(), inner.a.absolute_paths.begin(), inner.a.absolute_paths.end());
  }

  // The program at w[i] with its arguments.
  void program_at(const Words& w, std::size_t i)
  {
    // Environment assignments and wrappers that run the rest.
    while (i < w.size() && (is_assignment(w[i]) || w[i] == "env" || w[i] == "nohup" || w[i] == "time" ||
                            w[i] == "exec" || w[i] == "command")) {
      ++i;
    }
    if (i >= w.size()) {
      return;
    }
    const std::string prog(base_name(w[i]));
    if (a.launcher.empty()) {
      a.launcher = prog;
    }
    if (is_python(prog)) {
      python_args(w, i + 1);
    } else if (prog == "torchrun") {
      launcher_args(w, i + 1, torchrun_options());
    } else if (prog == "accelerate" && i + 1 < w.size() && w[i + 1] == "launch") {
      a.launcher = "accelerate launch";
      launcher_args(w, i + 2, accelerate_options());
    } else if (prog == "deepspeed") {
      launcher_args(w, i + 1, deepspeed_options());
    } else if (prog == "bash" || prog == "sh" || prog == "zsh" || prog == "dash") {
      shell_args(w, i + 1);
    } else if (prog == "uv" && i + 1 < w.size() && w[i + 1] == "run") {
      a.launcher.clear();
      std::size_t j = i + 2;
      while (j < w.size() && w[j].starts_with("-")) {
        ++j;
      }
      program_at(w, j);
    } else if (w[i].find('/') != std::string::npos && exists(w[i])) {
      a.launcher.clear();
      set_script(w[i]); // ./train.sh
    }
  }

  void command(const Words& w)
  {
    program_at(w, 0);
    // Every word that names a local path (and every --opt=VALUE value), the entry included.
    for (std::size_t i = 0; i < w.size(); ++i) {
      std::string word = w[i];
      if (word.starts_with("-")) {
        auto eq = word.find('=');
        if (eq == std::string::npos) {
          continue;
        }
        word = word.substr(eq + 1);
      } else if (i == 0 && word.find('/') == std::string::npos) {
        continue; // the program itself, from PATH
      } else if (is_assignment(word)) {
        word = word.substr(word.find('=') + 1);
      }
      if (word.empty() || word == "." || word == ".." || word.find('\n') != std::string::npos) {
        continue;
      }
      if (word.front() == '/') {
        if (exists(word)) {
          a.absolute_paths.push_back(word);
        }
        continue;
      }
      if (exists(word) && std::find(a.local_files.begin(), a.local_files.end(), word) == a.local_files.end()) {
        a.local_files.push_back(word);
      }
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

} // namespace

std::vector<std::string> split_shell_words(std::string_view line)
{
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  auto flush = [&] {
    if (in_word) {
      words.push_back(cur);
    }
    cur.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      auto end = line.find('\'', i + 1);
      cur.append(line.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
      in_word = true;
      i = end == std::string_view::npos ? line.size() : end;
    } else if (c == '"') {
      in_word = true;
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() &&
            std::string_view("$`\"\\\n").find(line[i + 1]) != std::string_view::npos) {
          ++i;
        }
        cur += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      flush();
    } else if (c == ';' || c == '|' || c == '&' || c == '(' || c == ')') {
      flush();
      std::string op(1, c);
      if ((c == '|' || c == '&') && i + 1 < line.size() && line[i + 1] == c) {
        op += c;
        ++i;
      }
      words.push_back(op);
    } else {
      cur += c;
      in_word = true;
    }
  }
  flush();
  return words;
}

CommandAnalysis analyze_command(const std::vector<std::string>& command, const ExistsFn& exists)
{
  Parser p{exists, {}};
  if (command.size() == 1) {
    auto words = split_shell_words(command.front());
    // A command line: analyse each simple command of a list (`cd x && python y.py`).
    std::vector<std::string> part;
    for (std::size_t i = 0; i <= words.size(); ++i) {
      const bool op = i < words.size() && (words[i] == ";" || words[i] == "&&" || words[i] == "||" || words[i] == "|" ||
                                           words[i] == "&" || words[i] == "(" || words[i] == ")");
      if (i == words.size() || op) {
        if (!part.empty()) {
          Parser inner{exists, {}};
          inner.command(part);
          if (p.a.entry.empty()) {
            p.a.launcher = inner.a.launcher;
            p.a.entry = inner.a.entry;
            p.a.entry_is_module = inner.a.entry_is_module;
            p.a.entry_file = inner.a.entry_file;
          }
          for (const auto& f : inner.a.local_files) {
            if (std::find(p.a.local_files.begin(), p.a.local_files.end(), f) == p.a.local_files.end()) {
              p.a.local_files.push_back(f);
            }
          }
          p.a.absolute_paths.insert(p.a.absolute_paths.end(), inner.a.absolute_paths.begin(),
                                    inner.a.absolute_paths.end());
        }
        part.clear();
      } else {
        part.push_back(words[i]);
      }
    }
    return p.a;
  }
  p.command(command);
  return p.a;
}

std::vector<std::string> misplaced_rv_flags(const std::vector<std::string>& command,
                                            const std::vector<std::string>& rv_flags)
{
  std::vector<std::string> found;
  const auto words = command.size() == 1 ? split_shell_words(command.front()) : command;
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
