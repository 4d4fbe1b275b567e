// The one launcher grammar (core/command/grammar): wrappers, python names, launchers and their
// own options. The cases marked "old sync" or "old templates" are where the two readers rv had
// before disagreed; each assertion failed against that one.

#include "core/command/grammar.hpp"

#include <doctest/doctest.h>

using namespace rv::command;
using V = std::vector<std::string>;

TEST_CASE("command grammar: python interpreters by name (old sync refused python2, old templates python3.13t)")
{
  for (const char* p : {"python", "python3", "python3.11", "python2", "python3.13t", "/opt/bin/python3.12"}) {
    CAPTURE(p);
    CHECK(is_python(p));
  }
  for (const char* p : {"pythonista", "python3.", "python-config", "ipython", "pythont", "/python/bin/x"}) {
    CAPTURE(p);
    CHECK_FALSE(is_python(p));
  }
}

TEST_CASE("command grammar: the program after assignments, reserved words and wrappers")
{
  const std::pair<V, std::size_t> cases[] = {
      {{"A=1", "B=2", "python", "t.py"}, 2},
      {{"env", "-u", "X", "-i", "A=1", "python", "t.py"}, 5},
      {{"time", "torchrun", "t.py"}, 1}, // old templates: `time` hid the launcher
      {{"/usr/bin/time", "-p", "python", "t.py"}, 2},
      {{"nohup", "nice", "-n", "5", "python", "t.py"}, 4},
      {{"timeout", "-s", "INT", "2h", "python", "t.py"}, 4},
      {{"stdbuf", "-oL", "python", "t.py"}, 2},
      {{"uv", "run", "--with", "numpy", "python", "t.py"}, 4}, // old sync: `numpy` was the program
      {{"exec", "-a", "x", "python", "t.py"}, 3},
      {{"do", "python", "t.py"}, 1},
      {{"!", "{", "python", "t.py"}, 2},
      {{"uv", "pip", "install", "x"}, 0},
      {{"1A=b", "python"}, 0},
  };
  for (const auto& [words, program] : cases) {
    CAPTURE(words.front());
    CHECK(invocation(words).program == program);
  }
  CHECK(invocation({"A=1", "env"}).program == Invocation::npos);
}

TEST_CASE("command grammar: python's entry: script, module, -c, stdin")
{
  auto script = invocation({"python3", "-u", "-X", "dev", "-W", "ignore", "train.py", "--lr", "1"});
  CHECK(script.kind == ProgramKind::python);
  CHECK(script.name == "python3");
  CHECK(script.entry_kind == EntryKind::script);
  CHECK(script.entry == "train.py");
  CHECK(script.entry_at == 6);
  auto module = invocation({"python", "-mpkg.cli", "x"});
  CHECK(module.entry_kind == EntryKind::module);
  CHECK(module.entry == "pkg.cli");
  CHECK(invocation({"python", "-c", "print(1)"}).entry_kind == EntryKind::command_string);
  CHECK(invocation({"python", "-"}).entry_kind == EntryKind::none);
}

TEST_CASE("command grammar: launchers, by program and by python module, with their option tables")
{
  auto t = invocation({"torchrun", "--nproc_per_node", "4", "--standalone", "train.py", "--master_port", "5"});
  CHECK(t.launcher == LauncherKind::torchrun);
  CHECK(t.args == 1);
  CHECK(t.entry_at == 4);
  auto acc = invocation({"accelerate", "launch", "--machine-rank", "0", "--multi_gpu", "-m", "pkg"});
  CHECK(acc.launcher == LauncherKind::accelerate);
  CHECK(acc.name == "accelerate launch");
  CHECK(acc.args == 2);
  CHECK(acc.entry_kind == EntryKind::module);
  CHECK(acc.entry == "pkg");
  // Python options before -m (old templates wanted -m right after python).
  auto run = invocation({"python3", "-u", "-m", "torch.distributed.run", "--nnodes", "2", "t.py"});
  CHECK(run.launcher == LauncherKind::torchrun);
  CHECK(run.name == "python -m torch.distributed.run");
  CHECK(run.args == 4);
  CHECK(run.entry_at == 6);
  // The python modules behind accelerate and deepspeed (old templates knew only torch's).
  CHECK(invocation({"python", "-m", "accelerate.commands.launch", "t.py"}).launcher == LauncherKind::accelerate);
  CHECK(invocation({"python", "-m", "deepspeed.launcher.runner", "t.py"}).launcher == LauncherKind::deepspeed);
  // --no_python: the entry is another program.
  auto prog = invocation({"torchrun", "--no-python", "bash", "run.sh"});
  CHECK(prog.entry_kind == EntryKind::program);
  CHECK(prog.entry_at == 2);
  // A module entry ends the launcher's options (old templates took `--master_port` after it as given).
  auto mod = invocation({"torchrun", "-m", "pkg.train", "--master_port", "5"});
  CHECK(mod.entry_kind == EntryKind::module);
  CHECK(mod.entry_at == 2);
  CHECK(invocation({"accelerate", "config"}).launcher == LauncherKind::none);
}

TEST_CASE("command grammar: shells: a script or a -c line")
{
  auto line = invocation({"bash", "-xc", "cd x && python t.py"});
  CHECK(line.kind == ProgramKind::shell);
  CHECK(line.entry_kind == EntryKind::shell_line);
  CHECK(line.entry == "cd x && python t.py");
  auto script = invocation({"sh", "-o", "pipefail", "+x", "--login", "run.sh", "a"});
  CHECK(script.entry_kind == EntryKind::script);
  CHECK(script.entry == "run.sh");
  CHECK(to_string(LauncherKind::deepspeed) == std::string("deepspeed"));
}
