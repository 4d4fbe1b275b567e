// Launcher parsing on a table of real command lines: which local file is the entry, behind
// which launcher, and which words name local files.

#include "sync/command.hpp"

#include <doctest/doctest.h>

#include <set>

using rv::sync::analyze_command;
using rv::sync::misplaced_rv_flags;
using V = std::vector<std::string>;

namespace {

// The "local files" of every case.
const std::set<std::string> k_local = {
    "train.py",        "scripts/train.py",    "run.sh",        "configs/a.yaml", "ds.json",
    "pkg/__init__.py", "pkg/cli/__main__.py", "tools/eval.py", "hosts",          "data",
    "/home/me/abs.py"};

bool exists(const std::string& p)
{
  return k_local.count(p.starts_with("./") ? p.substr(2) : p) != 0;
}

struct Case {
  V command;
  const char* launcher;
  const char* entry;
  bool module;
  const char* entry_file;
};

} // namespace

TEST_CASE("sync: launcher parsing finds the entry behind real launchers")
{
  const Case cases[] = {
      {{"python", "train.py", "--lr", "3e-4"}, "python", "train.py", false, "train.py"},
      {{"python3", "-u", "scripts/train.py"}, "python3", "scripts/train.py", false, "scripts/train.py"},
      {{"python3.11", "-X", "dev", "-W", "ignore", "train.py"}, "python3.11", "train.py", false, "train.py"},
      {{"torchrun", "--nproc_per_node=4", "train.py", "--epochs", "3"}, "torchrun", "train.py", false, "train.py"},
      {{"torchrun", "--nproc_per_node", "4", "--nnodes", "2", "--rdzv_backend", "c10d", "scripts/train.py"},
       "torchrun",
       "scripts/train.py",
       false,
       "scripts/train.py"},
      {{"torchrun", "--standalone", "--nproc-per-node", "8", "-m", "pkg.cli"},
       "torchrun",
       "pkg.cli",
       true,
       "pkg/cli/__main__.py"},
      {{"python", "-m", "torch.distributed.run", "--nproc_per_node=2", "train.py"},
       "python -m torch.distributed.run",
       "train.py",
       false,
       "train.py"},
      {{"python", "-m", "torch.distributed.launch", "--nproc_per_node", "2", "--use_env", "train.py"},
       "python -m torch.distributed.launch",
       "train.py",
       false,
       "train.py"},
      {{"accelerate", "launch", "--config_file", "configs/a.yaml", "--num_processes", "4", "--multi_gpu", "train.py",
        "--bf16"},
       "accelerate launch",
       "train.py",
       false,
       "train.py"},
      {{"accelerate", "launch", "--mixed_precision=bf16", "-m", "pkg"},
       "accelerate launch",
       "pkg",
       true,
       "pkg/__init__.py"},
      {{"deepspeed", "--num_gpus", "8", "--hostfile", "hosts", "train.py", "--deepspeed_config", "ds.json"},
       "deepspeed",
       "train.py",
       false,
       "train.py"},
      {{"deepspeed", "--no_local_rank", "train.py"}, "deepspeed", "train.py", false, "train.py"},
      {{"python", "-m", "pkg.cli", "--help"}, "python", "pkg.cli", true, "pkg/cli/__main__.py"},
      {{"python", "-m", "http.server"}, "python", "http.server", true, ""},
      {{"bash", "run.sh", "arg"}, "bash", "run.sh", false, "run.sh"},
      {{"sh", "-x", "run.sh"}, "sh", "run.sh", false, "run.sh"},
      {{"./run.sh", "x"}, "", "./run.sh", false, "./run.sh"},
      {{"CUDA_VISIBLE_DEVICES=0", "python", "train.py"}, "python", "train.py", false, "train.py"},
      {{"env", "A=1", "nohup", "python3", "tools/eval.py"}, "python3", "tools/eval.py", false, "tools/eval.py"},
      {{"uv", "run", "python", "train.py"}, "python", "train.py", false, "train.py"},
      {{"python train.py --lr 3e-4"}, "python", "train.py", false, "train.py"},
      {{"cd /tmp && torchrun --nproc_per_node=2 'train.py'"}, "torchrun", "train.py", false, "train.py"},
      {{"bash", "-c", "python3 tools/eval.py"}, "bash", "tools/eval.py", false, "tools/eval.py"},
      {{"python", "-c", "print(1)"}, "python", "", false, ""},
      {{"nvidia-smi"}, "nvidia-smi", "", false, ""},
      {{"python", "missing.py"}, "python", "missing.py", false, ""},
      {{"mytool", "--config", "configs/a.yaml", "train.py"}, "mytool", "train.py", false, "train.py"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.command.front());
    CAPTURE(c.command.size() > 1 ? c.command[1] : std::string());
    auto a = analyze_command(c.command, exists);
    CHECK(a.launcher == c.launcher);
    CHECK(a.entry == c.entry);
    CHECK(a.entry_is_module == c.module);
    CHECK(a.entry_file == c.entry_file);
  }
}

TEST_CASE("sync: every word naming a local path counts, --opt=VALUE values too, absolute paths are reported")
{
  auto a = analyze_command(
      {"python", "train.py", "--config=configs/a.yaml", "--data", "data", "--x", "/home/me/abs.py"}, exists);
  CHECK(a.local_files == V{"train.py", "configs/a.yaml", "data"});
  CHECK(a.absolute_paths == V{"/home/me/abs.py"});
  CHECK(a.names_local_file());
  // Nothing local: no sync.
  CHECK_FALSE(analyze_command({"nvidia-smi", "-L"}, exists).names_local_file());
  CHECK_FALSE(analyze_command({"python", "-c", "import torch"}, exists).names_local_file());
  CHECK_FALSE(analyze_command({"echo hello && sleep 1"}, exists).names_local_file());
  // The program word itself is looked up on PATH, not locally (a local file named like it is not "named").
  CHECK_FALSE(analyze_command({"hosts"}, exists).names_local_file());
}

TEST_CASE("sync: rv's own flags after the command are reported once each")
{
  const V rv_flags = {"--time", "-g", "--gpu", "--follow", "-f", "--name"};
  CHECK(misplaced_rv_flags({"python", "train.py", "--time", "2h", "-g", "2", "--time=3h"}, rv_flags) ==
        V{"--time", "-g"});
  CHECK(misplaced_rv_flags({"python train.py -f"}, rv_flags) == V{"-f"});
  CHECK(misplaced_rv_flags({"python", "train.py", "--lr", "1"}, rv_flags).empty());
  // The first word is the program, never a misplaced flag.
  CHECK(misplaced_rv_flags({"--name"}, rv_flags).empty());
}

TEST_CASE("sync: command lines read by the one grammar (each case failed with sync's own splitter)")
{
  // A newline ends a command: the second line's python runs the entry, not `echo`.
  auto lines = analyze_command({"echo hi\npython train.py"}, exists);
  CHECK(lines.launcher == "python");
  CHECK(lines.entry == "train.py");
  // A continued line: the entry is train.py, not a word made of the newline.
  auto continued = analyze_command({"torchrun \\\n  --nproc_per_node 2 \\\n  train.py"}, exists);
  CHECK(continued.entry == "train.py");
  CHECK(continued.entry_file == "train.py");
  // A comment names nothing.
  CHECK(analyze_command({"python train.py # was scripts/train.py"}, exists).local_files == V{"train.py"});
  // python2 is a python; `uv run --with X` takes a value; `bash -c` reads a whole line.
  CHECK(analyze_command({"python2", "-m", "pkg.cli"}, exists).entry_file == "pkg/cli/__main__.py");
  auto uv = analyze_command({"uv", "run", "--with", "data", "python", "train.py"}, exists);
  CHECK(uv.launcher == "python");
  CHECK(uv.entry == "train.py");
  auto line = analyze_command({"bash", "-c", "cd . && python -m pkg.cli"}, exists);
  CHECK(line.launcher == "bash");
  CHECK(line.entry == "pkg.cli");
  CHECK(line.entry_is_module);
  // `1A=b` is not an assignment: sh runs it as the program.
  CHECK(analyze_command({"1A=b", "python", "train.py"}, exists).launcher == "1A=b");
}

TEST_CASE("sync: redirection targets name files, the launcher is known")
{
  auto a = analyze_command({"python train.py < data > hosts 2>&1"}, exists);
  CHECK(a.entry == "train.py");
  CHECK(a.local_files == V{"train.py", "data", "hosts"});
  CHECK(a.known_launcher);
  CHECK(analyze_command({"./run.sh"}, exists).known_launcher);
  CHECK(analyze_command({"accelerate", "launch", "train.py"}, exists).known_launcher);
  CHECK_FALSE(analyze_command({"mytool", "train.py"}, exists).known_launcher);
}
