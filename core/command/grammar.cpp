#include "core/command/grammar.hpp"

#include "core/command/words.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace rv::command {
namespace {

using Words = std::vector<std::string>;
using Names = std::set<std::string, std::less<>>;

// A program's own options: those that take the next word as their value. Anything else starting
// with '-' is a flag; `--opt=value` carries its value.
struct OptionTable {
  Names with_value;
  Names flags;                      // used when `unknown_takes_value`
  bool unknown_takes_value = false; // accelerate, deepspeed: most options take a value
  Names module_flags;               // the entry is a module (`-m`, `--module`)
  Names program_flags;              // the entry is a program, not a script (`--no_python`)
};

bool takes_value(const OptionTable& t, std::string_view opt)
{
  if (opt.find('=') != std::string_view::npos) {
    return false;
  }
  if (t.with_value.contains(opt)) {
    return true;
  }
  return t.unknown_takes_value && !t.flags.contains(opt) && !t.module_flags.contains(opt) &&
         !t.program_flags.contains(opt);
}

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
                             {"--no_local_rank", "--no_ssh_check", "--force_multi", "--save_pid",
                              "--enable_each_rank_log", "--autotuning_run", "--elastic_training",
                              "--bind_cores_to_rank", "--no_ssh", "-h", "--help"},
                             true,
                             {"--module"},
                             {"--no_python"}};
  return t;
}

// The distributed launchers: as a program (with a second word, e.g. `accelerate launch`), and as
// the python module behind it (`python -m torch.distributed.run`).
struct Launcher {
  std::string_view program;
  std::string_view sub; // "" = none
  std::string_view module;
  std::string_view module_alias; // "" = none
  LauncherKind kind;
  const OptionTable& (*options)();
};

const std::array<Launcher, 3>& launchers()
{
  static const std::array<Launcher, 3> t{{
      {"torchrun", "", "torch.distributed.run", "torch.distributed.launch", LauncherKind::torchrun, torchrun_options},
      {"accelerate", "launch", "accelerate.commands.launch", "", LauncherKind::accelerate, accelerate_options},
      {"deepspeed", "", "deepspeed.launcher.runner", "", LauncherKind::deepspeed, deepspeed_options},
  }};
  return t;
}

// Words that run the rest of the command: their own options, then `positionals` words of their
// own (timeout's duration), then the command.
struct Wrapper {
  std::string_view name;
  std::string_view sub; // "" = none
  OptionTable options;
  int positionals = 0;
};

// A wrapper's options: those listed take a value, any other is a flag.
OptionTable values(Names with_value)
{
  OptionTable t;
  t.with_value = std::move(with_value);
  return t;
}

const std::vector<Wrapper>& wrappers()
{
  static const std::vector<Wrapper> t{
      {"env", "", values({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0},
      {"time", "", values({"-f", "--format", "-o", "--output"}), 0},
      {"nohup", "", values({}), 0},
      {"nice", "", values({"-n", "--adjustment"}), 0},
      {"exec", "", values({"-a"}), 0},
      {"command", "", values({}), 0},
      {"stdbuf", "", values({"-i", "-o", "-e", "--input", "--output", "--error"}), 0},
      {"timeout", "", values({"-s", "--signal", "-k", "--kill-after"}), 1},
      {"uv", "run",
       values({"--with",
               "--with-editable",
               "--with-requirements",
               "--python",
               "-p",
               "--project",
               "--directory",
               "--env-file",
               "--extra",
               "--group",
               "--only-group",
               "--package",
               "--index",
               "--default-index",
               "--index-url",
               "--extra-index-url",
               "--find-links",
               "-f",
               "--cache-dir",
               "--config-file"}),
       0},
  };
  return t;
}

// Reserved words that may stand before a command (`if torchrun ...; then python ...; fi`).
bool is_reserved_prefix(std::string_view w)
{
  return w == "!" || w == "{" || w == "if" || w == "then" || w == "else" || w == "elif" || w == "do" || w == "while" ||
         w == "until";
}

bool is_shell(std::string_view prog)
{
  return prog == "bash" || prog == "sh" || prog == "zsh" || prog == "dash";
}

bool is_option(const std::string& word)
{
  return word.size() > 1 && word[0] == '-';
}

// Skips options of `t` from words[i]; a `--` is skipped too. Returns the first other word.
std::size_t skip_options(const Words& w, std::size_t i, const OptionTable& t)
{
  for (; i < w.size() && is_option(w[i]); ++i) {
    if (w[i] == "--") {
      return i + 1;
    }
    if (takes_value(t, w[i])) {
      ++i;
    }
  }
  return i;
}

struct Reader {
  const Words& w;
  Invocation inv;

  void entry(EntryKind kind, std::size_t at, std::string text)
  {
    inv.entry_kind = kind;
    inv.entry_at = at;
    inv.entry = std::move(text);
  }

  // A launcher's options per `t`, then its script, module or program.
  void launcher_args(std::size_t i, const OptionTable& t)
  {
    bool module = false;
    bool program = false;
    for (; i < w.size() && is_option(w[i]); ++i) {
      if (w[i] == "--") {
        ++i;
        break;
      }
      const auto name = std::string_view(w[i]).substr(0, w[i].find('='));
      module = module || t.module_flags.contains(name);
      program = program || t.program_flags.contains(name);
      if (takes_value(t, w[i])) {
        ++i;
      }
    }
    if (i < w.size()) {
      entry(module ? EntryKind::module : program ? EntryKind::program : EntryKind::script, i, w[i]);
    }
  }

  void module(std::size_t at, std::string name)
  {
    for (const auto& l : launchers()) {
      if (name == l.module || (!l.module_alias.empty() && name == l.module_alias)) {
        inv.kind = ProgramKind::launcher;
        inv.launcher = l.kind;
        inv.name = "python -m " + name;
        inv.args = at + 1;
        launcher_args(at + 1, l.options());
        return;
      }
    }
    entry(EntryKind::module, at, std::move(name));
  }

  void python_args(std::size_t i)
  {
    for (; i < w.size(); ++i) {
      const auto& word = w[i];
      if (word.starts_with("-c")) {
        entry(EntryKind::command_string, i, {});
        return;
      }
      if (word == "-m") {
        if (i + 1 < w.size()) {
          module(i + 1, w[i + 1]);
        }
        return;
      }
      if (word.starts_with("-m")) {
        module(i, word.substr(2));
        return;
      }
      if (word == "-W" || word == "-X" || word == "--check-hash-based-pycs") {
        ++i;
      } else if (!is_option(word)) {
        if (word != "-") { // `-`: the script comes on stdin
          entry(EntryKind::script, i, word);
        }
        return;
      }
    }
  }

  void shell_args(std::size_t i)
  {
    for (; i < w.size(); ++i) {
      const auto& word = w[i];
      const bool short_opts = word.size() > 1 && (word[0] == '-' || word[0] == '+') && word[1] != '-';
      if (short_opts && word[0] == '-' && word.find('c') != std::string::npos) { // -c, -xc, -ec
        if (i + 1 < w.size()) {
          entry(EntryKind::shell_line, i + 1, w[i + 1]);
        }
        return;
      }
      if (word == "-o" || word == "+o" || word == "-O" || word == "+O" || word == "--rcfile" || word == "--init-file") {
        ++i;
      } else if (!short_opts && !word.starts_with("--")) {
        entry(EntryKind::script, i, word);
        return;
      }
    }
  }

  // The words before the program: assignments, reserved words and wrappers with their options.
  std::size_t skip_prefix(std::size_t i) const
  {
    while (i < w.size()) {
      if (is_assignment(w[i]) || is_reserved_prefix(w[i])) {
        ++i;
        continue;
      }
      const auto name = base_name(w[i]);
      const auto wrapper = std::find_if(wrappers().begin(), wrappers().end(), [&](const Wrapper& x) {
        return x.name == name && (x.sub.empty() || (i + 1 < w.size() && w[i + 1] == x.sub));
      });
      if (wrapper == wrappers().end()) {
        break;
      }
      i = skip_options(w, i + (wrapper->sub.empty() ? 1 : 2), wrapper->options);
      i += static_cast<std::size_t>(wrapper->positionals);
    }
    return i;
  }

  void read(std::size_t from)
  {
    const auto i = skip_prefix(from);
    if (i >= w.size()) {
      return;
    }
    inv.program = i;
    inv.name = std::string(base_name(w[i]));
    inv.args = i + 1;
    if (is_python(inv.name)) {
      inv.kind = ProgramKind::python;
      python_args(i + 1);
      return;
    }
    if (is_shell(inv.name)) {
      inv.kind = ProgramKind::shell;
      shell_args(i + 1);
      return;
    }
    for (const auto& l : launchers()) {
      if (inv.name != l.program || (!l.sub.empty() && (i + 1 >= w.size() || w[i + 1] != l.sub))) {
        continue;
      }
      inv.kind = ProgramKind::launcher;
      inv.launcher = l.kind;
      if (!l.sub.empty()) {
        inv.name = std::string(l.program) + " " + std::string(l.sub);
        inv.args = i + 2;
      }
      launcher_args(inv.args, l.options());
      return;
    }
  }
};

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

std::string_view base_name(std::string_view word)
{
  const auto slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

bool is_python(std::string_view program)
{
  auto name = base_name(program);
  if (!name.starts_with("python")) {
    return false;
  }
  name.remove_prefix(6);
  if (name.ends_with('t') && name.size() > 1) { // python3.13t: the free-threaded build
    name.remove_suffix(1);
  }
  if (!name.empty() && (name.front() == '.' || name.back() == '.')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

Invocation invocation(const std::vector<std::string>& words, std::size_t from)
{
  Reader r{words, {}};
  r.read(from);
  return std::move(r.inv);
}

} // namespace rv::command
