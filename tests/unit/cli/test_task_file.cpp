// Task files (cli/task_file.hpp): every key read and laid under the flags, the flags winning, and
// each kind of mistake as one `file:line:` error.

#include "cli/task_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using rv::ErrorCode;
using rv::cli::apply_task_file;
using rv::cli::GivenFlags;
using rv::cli::JobFlags;
using rv::cli::parse_task_file;
using rv::cli::TaskFile;

namespace {

const char* k_every_key = R"toml(run = "python train.py --lr 3e-4"   # the command
setup = "pip install -r requirements.txt"
outputs = ["results/", "ckpt/last.pt"]

[resources]
gpus = 4
gpu_types = ["a100", "h100"]
time = "30m"
nodes = 2
mem = "64G"
checkpoint = true
hosts = ["rvtb", "rvtb2"]

[env]
secrets = ["HF_TOKEN", "WANDB_API_KEY"]
vars = { WANDB_MODE = "offline", SEED = 7, FAST = true, NOTE = "two words; $HOME" }
)toml";

TaskFile parsed(const char* text)
{
  auto f = parse_task_file(text, "rv.toml");
  REQUIRE_MESSAGE(f.has_value(), (f ? "" : f.error().message));
  return *f;
}

// The error `text` gives: its message and hint.
rv::Error error_of(const char* text, const std::string& path = "task.toml")
{
  auto f = parse_task_file(text, path);
  REQUIRE_FALSE(f.has_value());
  CHECK(f.error().code == ErrorCode::usage);
  return f.error();
}

} // namespace

TEST_CASE("task file: every key is read")
{
  const auto f = parsed(k_every_key);
  CHECK(f.path == "rv.toml");
  CHECK(f.run == std::vector<std::string>{"python train.py --lr 3e-4"});
  CHECK(f.setup == "pip install -r requirements.txt");
  CHECK(f.outputs == std::vector<std::string>{"results/", "ckpt/last.pt"});
  CHECK(f.gpus == 4);
  CHECK(f.gpu_types == std::vector<std::string>{"a100", "h100"});
  CHECK(f.time == "30m");
  CHECK(f.nodes == 2);
  CHECK(f.mem == "64G");
  CHECK(f.checkpoint == true);
  CHECK(f.hosts == std::vector<std::string>{"rvtb", "rvtb2"});
  CHECK(f.secrets == std::vector<std::string>{"HF_TOKEN", "WANDB_API_KEY"});
  // By name (toml++ keeps a table's keys sorted): each is exported on its own, so their order does not matter.
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"FAST", "true"}, {"NOTE", "two words; $HOME"}, {"SEED", "7"}, {"WANDB_MODE", "offline"}};
  CHECK(f.vars == vars);
}

TEST_CASE("task file: only run is required; the other keys stay unset")
{
  const auto f = parsed("run = \"nvidia-smi\"\n");
  CHECK(f.run == std::vector<std::string>{"nvidia-smi"});
  CHECK(f.setup.empty());
  CHECK_FALSE(f.outputs);
  CHECK_FALSE(f.gpus);
  CHECK_FALSE(f.gpu_types);
  CHECK_FALSE(f.time);
  CHECK_FALSE(f.nodes);
  CHECK_FALSE(f.mem);
  CHECK_FALSE(f.checkpoint);
  CHECK_FALSE(f.hosts);
  CHECK_FALSE(f.secrets);
  CHECK(f.vars.empty());
}

TEST_CASE("task file: run and setup as lists of words; single strings where lists are allowed")
{
  const auto f = parsed(R"toml(run = ["python", "train.py", "--name", "a b"]
setup = ["pip", "install", "-e", "."]
outputs = "results/"
[resources]
gpu_types = "a100"
time = 90
hosts = "rvtb2"
)toml");
  CHECK(f.run == std::vector<std::string>{"python", "train.py", "--name", "a b"});
  CHECK(f.setup == "pip install -e .");
  CHECK(f.outputs == std::vector<std::string>{"results/"});
  CHECK(f.gpu_types == std::vector<std::string>{"a100"});
  CHECK(f.time == "90"); // a bare number of minutes, as --time takes
  CHECK(f.hosts == std::vector<std::string>{"rvtb2"});
}

TEST_CASE("task file: an unknown key names the file, its line and the closest key")
{
  struct Case {
    const char* text;
    const char* message;
    const char* guess;
  };
  const Case cases[] = {
      {"run = \"x\"\n\n[resources]\ngpu = 2\n", "task.toml:4: unknown key 'gpu' in [resources]", "gpus"},
      {"run = \"x\"\noutput = [\"a\"]\n", "task.toml:2: unknown key 'output'", "outputs"},
      {"run = \"x\"\n[env]\nsecret = [\"A\"]\n", "task.toml:3: unknown key 'secret' in [env]", "secrets"},
      {"run = \"x\"\n[resource]\ngpus = 1\n", "task.toml:2: unknown key 'resource'", "resources"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const auto e = error_of(c.text);
    CHECK(e.message == c.message);
    CHECK(e.hint.starts_with(std::string("did you mean '") + c.guess + "'?"));
  }
  auto e = error_of("run = \"x\"\nzzzzzz = 1\n");
  CHECK(e.message == "task.toml:2: unknown key 'zzzzzz'");
  CHECK(e.hint.find("did you mean") == std::string::npos);
  CHECK(e.hint.find("run, setup, outputs, resources, env") != std::string::npos);
  e = error_of("run = \"x\"\narray = 4\n");
  CHECK(e.message == "task.toml:2: unknown key 'array'");
  CHECK(e.hint.find("--array") != std::string::npos);
}

TEST_CASE("task file: a wrong type is one line with file:line")
{
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"run = 3\n", "task.toml:1: run must be a string or a list of strings, not an integer"},
      {"run = [\"a\", 1]\n", "task.toml:1: run must list strings, and one item is an integer"},
      {"run = \"x\"\nsetup = true\n", "task.toml:2: setup must be a string or a list of strings, not a boolean"},
      {"run = \"x\"\noutputs = 1\n", "task.toml:2: outputs must be a string or a list of strings, not an integer"},
      {"run = \"x\"\n[resources]\ngpus = \"2\"\n", "task.toml:3: gpus must be a whole number, not a string"},
      {"run = \"x\"\n[resources]\ngpus = 1.5\n", "task.toml:3: gpus must be a whole number, not a number"},
      {"run = \"x\"\n[resources]\ngpus = 0\n", "task.toml:3: gpus must be at least 1, not 0"},
      {"run = \"x\"\n[resources]\nnodes = true\n", "task.toml:3: nodes must be a whole number, not a boolean"},
      {"run = \"x\"\n[resources]\nmem = 64\n", "task.toml:3: mem must be a string, not an integer"},
      {"run = \"x\"\n[resources]\ncheckpoint = \"yes\"\n",
       "task.toml:3: checkpoint must be true or false, not a string"},
      {"run = \"x\"\n[resources]\ngpu_types = [1]\n",
       "task.toml:3: gpu_types must list strings, and one item is an integer"},
      {"run = \"x\"\n[resources]\nhosts = {a = 1}\n",
       "task.toml:3: hosts must be a string or a list of strings, not a table"},
      {"run = \"x\"\n[env]\nsecrets = \"HF_TOKEN\"\n", "task.toml:3: secrets must be a list of strings, not a string"},
      {"run = \"x\"\n[env]\nvars = [\"A=1\"]\n",
       "task.toml:3: vars must be a table (vars = { NAME = \"value\" }), not a list"},
      {"run = \"x\"\n[env]\nvars = { A = 1.5 }\n",
       "task.toml:3: vars.A must be a string, a whole number or a boolean, not a number"},
      {"run = \"x\"\nresources = 4\n", "task.toml:2: resources must be a table ([resources]), not an integer"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(error_of(c.text).message == c.message);
  }
}

TEST_CASE("task file: bad values: a duration, a size, a name")
{
  auto e = error_of("run = \"x\"\n[resources]\ntime = \"2 weeks\"\n");
  CHECK(e.message.starts_with("task.toml:3: time '2 weeks': "));
  CHECK(e.hint.find("30m") != std::string::npos);
  e = error_of("run = \"x\"\n[resources]\ntime = \"0h\"\n");
  CHECK(e.message.starts_with("task.toml:3: time '0h': "));
  e = error_of("run = \"x\"\n[resources]\nmem = \"lots\"\n");
  CHECK(e.message.starts_with("task.toml:3: mem 'lots': "));
  e = error_of("run = \"x\"\n[env]\nsecrets = [\"HF-TOKEN\"]\n");
  CHECK(e.message == "task.toml:3: secrets: 'HF-TOKEN' is not a variable name");
  e = error_of("run = \"x\"\n[env]\nvars = { \"A B\" = \"1\" }\n");
  CHECK(e.message == "task.toml:3: vars: 'A B' is not a variable name");
  e = error_of("run = \"  \"\n");
  CHECK(e.message == "task.toml:1: run is empty");
  e = error_of("run = []\n");
  CHECK(e.message == "task.toml:1: run is empty");
}

TEST_CASE("task file: a missing run and a TOML syntax error")
{
  auto e = error_of("[resources]\ngpus = 1\n");
  CHECK(e.message == "task.toml:1: no `run`: the task file must say what to run");
  e = error_of("run = \"x\"\n[resources]\ngpus = = 2\n");
  CHECK(e.message.starts_with("task.toml:3: not valid TOML: "));
  e = error_of("run = \"x\"\nrun = \"y\"\n");
  CHECK(e.message.starts_with("task.toml:2: not valid TOML: "));
}

TEST_CASE("task file: every key sets its flag")
{
  JobFlags flags;
  const auto applied = apply_task_file(parsed(k_every_key), flags, {});
  CHECK(applied.command == std::vector<std::string>{"python train.py --lr 3e-4"});
  CHECK(applied.hosts == std::vector<std::string>{"rvtb", "rvtb2"});
  CHECK(flags.plan.gpus == 4);
  CHECK(flags.plan.type == "a100,h100");
  CHECK(flags.plan.time == "30m");
  CHECK(flags.plan.nodes == 2);
  CHECK(flags.plan.mem == "64G");
  CHECK(flags.plan.checkpoint);
  CHECK_FALSE(flags.plan.no_checkpoint);
  CHECK(flags.smart.outputs == std::vector<std::string>{"results/", "ckpt/last.pt"});
  CHECK(flags.smart.setup == "pip install -r requirements.txt");
  CHECK(flags.secrets == std::vector<std::string>{"HF_TOKEN", "WANDB_API_KEY"});
  CHECK(flags.env == std::vector<std::string>{"FAST=true", "NOTE=two words; $HOME", "SEED=7", "WANDB_MODE=offline"});
  // The result goes through the flags' own checks.
  auto request = rv::cli::to_request(flags.plan);
  REQUIRE(request.has_value());
  CHECK(request->gpus == 4);
  CHECK(request->nodes == 2);
  CHECK(request->time_s == 1800);
  CHECK(request->mem_mb == 64 * 1024);
  CHECK(request->allow_checkpoint);
  CHECK(request->gpu_type == "a100,h100");
}

TEST_CASE("task file: flags given on the command line win")
{
  JobFlags flags;
  flags.plan.gpus = 2;
  flags.plan.type = "h200";
  flags.plan.time = "2h";
  flags.plan.single_node = true;
  flags.plan.mem = "8G";
  flags.plan.no_checkpoint = true;
  flags.smart.outputs = {"other/"};
  flags.smart.setup = "true";
  flags.secrets = std::vector<std::string>{"OTHER"};
  flags.env = {"SEED=1"};
  const GivenFlags given = {"gpu",    "type",  "time",   "single-node", "mem", "no-checkpoint",
                            "output", "setup", "secret", "env",         "host"};
  const auto applied = apply_task_file(parsed(k_every_key), flags, given);
  CHECK(applied.hosts.empty()); // --host wins
  CHECK(flags.plan.gpus == 2);
  CHECK(flags.plan.type == "h200");
  CHECK(flags.plan.time == "2h");
  CHECK_FALSE(flags.plan.nodes); // --single-node wins over nodes = 2
  CHECK(flags.plan.mem == "8G");
  CHECK_FALSE(flags.plan.checkpoint);
  CHECK(flags.plan.no_checkpoint);
  CHECK(flags.smart.outputs == std::vector<std::string>{"other/"});
  CHECK(flags.smart.setup == "true");
  CHECK(flags.secrets == std::vector<std::string>{"OTHER"});
  // --env SEED=1 wins for SEED only; the file's other vars come first, so --env is exported last.
  CHECK(flags.env == std::vector<std::string>{"FAST=true", "NOTE=two words; $HOME", "WANDB_MODE=offline", "SEED=1"});
}

TEST_CASE("task file: checkpoint = false turns the config's default off, as --no-checkpoint")
{
  JobFlags flags;
  apply_task_file(parsed("run = \"x\"\n[resources]\ncheckpoint = false\n"), flags, {});
  CHECK_FALSE(flags.plan.checkpoint);
  CHECK(flags.plan.no_checkpoint);
  auto request = rv::cli::to_request(flags.plan, {"", "", true});
  REQUIRE(request.has_value());
  CHECK_FALSE(request->allow_checkpoint);
}

TEST_CASE("task file: --nodes splits the GPUs evenly or is refused")
{
  rv::cli::PlanFlags f;
  f.gpus = 4;
  f.nodes = 3;
  auto r = rv::cli::to_request(f);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "--nodes 3 does not split 4 GPUs evenly");
  f.nodes = 1;
  r = rv::cli::to_request(f);
  REQUIRE(r.has_value());
  CHECK(r->single_node);
  f.nodes = 2;
  f.single_node = true;
  CHECK_FALSE(rv::cli::to_request(f).has_value());
}

TEST_CASE("task file: which words name one")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / fs::path("rv-task-file-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "train.toml") << "run = \"x\"\n";
  using rv::cli::task_file_of;
  // No project (no git, no pyproject): no words, no rv.toml.
  auto none = task_file_of({}, dir / "sub");
  REQUIRE(none.has_value());
  CHECK_FALSE(*none);
  auto named = task_file_of({"train.toml"}, dir);
  REQUIRE(named.has_value());
  CHECK(*named == dir / "train.toml");
  // A .toml word that is no file here is a command (a path on the cluster, say).
  auto remote = task_file_of({"missing.toml"}, dir);
  REQUIRE(remote.has_value());
  CHECK_FALSE(*remote);
  auto plain = task_file_of({"python", "train.py"}, dir);
  REQUIRE(plain.has_value());
  CHECK_FALSE(*plain);
  // A task file and a command: one or the other.
  auto both = task_file_of({"train.toml", "python", "x.py"}, dir);
  REQUIRE_FALSE(both.has_value());
  CHECK(both.error().message == "train.toml is a task file, and a command follows it (python): give one or the other");
  // rv.toml in the project root, from a folder below it.
  std::ofstream(dir / "requirements.txt") << "\n";
  std::ofstream(dir / "rv.toml") << "run = \"x\"\n";
  auto found = task_file_of({}, dir / "sub");
  REQUIRE(found.has_value());
  REQUIRE(*found);
  CHECK(fs::equivalent(**found, dir / "rv.toml"));
  fs::remove_all(dir);
}

TEST_CASE("task file: rv init's example reads back")
{
  const auto f = parsed(rv::cli::example_task_file().c_str());
  CHECK(f.run == std::vector<std::string>{"python train.py"});
  CHECK(f.gpus == 1);
  CHECK(f.time == "1h");
}
