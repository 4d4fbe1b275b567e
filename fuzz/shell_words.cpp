// The shell-word grammar and the command analysis on top of it; "exists" is a fake that says yes
// to names ending in .py, .sh or .yaml.
#include "fuzz/fuzz.hpp"
#include "sync/command.hpp"

#include <string>

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  auto words = rv::sync::split_shell_words(in);
  auto exists = [](const std::string& p) { return p.ends_with(".py") || p.ends_with(".sh") || p.ends_with(".yaml"); };
  auto a = rv::sync::analyze_command(words, exists);
  if (!a.entry_file.empty()) {
    RV_FUZZ_CHECK(exists(a.entry_file) || a.entry_is_module);
  }
  (void)rv::sync::analyze_command({std::string(in)}, exists);
  (void)rv::sync::misplaced_rv_flags(words, {"--time", "-g", "--gpus"});
  return 0;
}
