#include "templates/launcher.hpp"

#include "core/command/grammar.hpp"
#include "core/command/words.hpp"

#include <algorithm>

namespace rv::templates {
namespace {

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

} // namespace

LauncherInjection inject_launcher_flags(std::string_view line, bool multi_node)
{
  LauncherInjection out;
  std::vector<std::pair<std::size_t, std::string>> inserts; // offset, text
  for (const auto& simple : command::simple_commands(line)) {
    const auto words = simple.argv();
    const auto found = command::invocation(words);
    if (found.launcher == LauncherKind::none) {
      continue;
    }
    if (out.kind == LauncherKind::none) {
      out.kind = found.launcher;
    }
    // The launcher's own options: those before its entry (flags after the script are the script's).
    std::vector<std::string> given;
    for (std::size_t i = found.args; i < std::min(found.entry_at, words.size()); ++i) {
      if (words[i].starts_with("--")) {
        given.push_back(flag_name(words[i]));
      }
    }
    auto is_given = [&](std::string_view flag) { return std::find(given.begin(), given.end(), flag) != given.end(); };
    std::string flags;
    for (const auto& flag : flags_for(found.launcher, multi_node)) {
      if (is_given(flag.name) ||
          std::any_of(flag.also.begin(), flag.also.end(), [&](const char* f) { return is_given(f); })) {
        continue;
      }
      flags += ' ';
      flags += flag.name;
      if (*flag.value != '\0') {
        flags += '=';
        flags += flag.value;
      }
      if (std::find(out.injected.begin(), out.injected.end(), flag.name) == out.injected.end()) {
        out.injected.emplace_back(flag.name);
      }
    }
    if (!flags.empty()) {
      inserts.emplace_back(simple.words[found.args - 1].end, std::move(flags)); // after the launcher's name
    }
  }
  out.command = std::string(line);
  for (auto it = inserts.rbegin(); it != inserts.rend(); ++it) {
    out.command.insert(it->first, it->second);
  }
  return out;
}

} // namespace rv::templates
