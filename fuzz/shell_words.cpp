// The one shell-word grammar (core/command/) and both readers on top of it: sync's command
// analysis and templates' launcher injection. "exists" is a fake that says yes to names ending in
// .py, .sh or .yaml.
#include "core/command/grammar.hpp"
#include "core/command/words.hpp"
#include "fuzz/fuzz.hpp"
#include "sync/command.hpp"
#include "templates/launcher.hpp"

#include <string>

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  // Tokens lie inside the line, in order, and never overlap.
  std::size_t last = 0;
  for (const auto& t : rv::command::tokenize(in)) {
    RV_FUZZ_CHECK(t.begin >= last && t.begin < t.end && t.end <= in.size());
    last = t.end;
  }
  auto words = rv::command::split_words(in);
  for (const auto& simple : rv::command::simple_commands(in)) {
    const auto argv = simple.argv();
    const auto inv = rv::command::invocation(argv);
    RV_FUZZ_CHECK(inv.entry_at == rv::command::Invocation::npos || inv.entry_at < argv.size());
    RV_FUZZ_CHECK(inv.program == rv::command::Invocation::npos || inv.args <= argv.size());
  }
  auto exists = [](const std::string& p) { return p.ends_with(".py") || p.ends_with(".sh") || p.ends_with(".yaml"); };
  auto a = rv::sync::analyze_command(words, exists);
  if (!a.entry_file.empty()) {
    RV_FUZZ_CHECK(exists(a.entry_file) || a.entry_is_module);
  }
  (void)rv::sync::analyze_command({std::string(in)}, exists);
  (void)rv::sync::misplaced_rv_flags(words, {"--time", "-g", "--gpus"});
  // Injection only adds: the line typed is still there, byte for byte, in order.
  const auto injected = rv::templates::inject_launcher_flags(in, true).command;
  std::size_t at = 0;
  for (char c : in) {
    at = injected.find(c, at);
    RV_FUZZ_CHECK(at != std::string::npos);
    ++at;
  }
  return 0;
}
