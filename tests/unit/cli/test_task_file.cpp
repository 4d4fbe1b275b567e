// Task files (cli/task_file.hpp): every key read and laid under the flags, the flags winning, and
// each kind of mistake as one `file:line:` error.

#include "cli/task_file.hpp"

#include "app/run/launch/launch.hpp"
#include "app/run/plan/study.hpp"
#include "cli/study_flags.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using rv::ErrorCode;
using rv::cli::apply_task_file;
using rv::cli::GivenFlags;
using rv::cli::JobFlags;
using rv::cli::parse_task_file;
using rv::cli::TaskFile;
using StudyFlags = rv::app::study::StudyFlags;

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

TEST_CASE("task file: only run is required, the other keys stay unset")
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

TEST_CASE("task file: run and setup as lists of words, single strings where lists are allowed")
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
  e = error_of("run = \"x\"\nsweeps = { a = [1] }\n");
  CHECK(e.message == "task.toml:2: unknown key 'sweeps'");
  CHECK(e.hint.starts_with("did you mean 'sweep'?"));
  e = error_of("run = \"x\"\nretry_failled = true\n");
  CHECK(e.hint.starts_with("did you mean 'retry_failed'?"));
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
  StudyFlags study;
  const auto applied = apply_task_file(parsed(k_every_key), flags, study, {});
  CHECK_FALSE(applied.study);
  CHECK_FALSE(study.any());
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
  StudyFlags study;
  const auto applied = apply_task_file(parsed(k_every_key), flags, study, given);
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
  StudyFlags study;
  apply_task_file(parsed("run = \"x\"\n[resources]\ncheckpoint = false\n"), flags, study, {});
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

// ---- a study (docs/studies.md): array, [sweep], sweep_file, retries, retry_failed ----

namespace {

const char* k_study = R"toml(run = "python train.py --model {model} --lr {lr} --seed {seed}"
array = "%4"
retries = 3
retry_failed = true

[sweep]
model = ["small", "it's big"]
lr = [1e-4, 3e-4, 0.5, 2.0]
seed = 7
fast = [true, false]
)toml";

} // namespace

TEST_CASE("task file: the study keys are read as their flags carry them")
{
  const auto f = parsed(k_study);
  CHECK(f.array == "%4");
  CHECK(f.retries == 3);
  CHECK(f.retry_failed == true);
  // In the file's order (toml++ sorts a table's keys: fast, lr, model, seed), each value as
  // --sweep-file's JSON writes it: numbers in their shortest form, one value an axis of one.
  REQUIRE(f.sweeps);
  CHECK(*f.sweeps ==
        std::vector<std::string>{"model=small,it's big", "lr=0.0001,0.0003,0.5,2.0", "seed=7", "fast=true,false"});
  CHECK_FALSE(f.sweep_file);
  const auto g = parsed("run = \"x {task}\"\narray = \"0-15:5%2\"\nsweep_file = \"grids/a.json\"\n");
  CHECK(g.array == "0-15:5%2");
  CHECK(g.sweep_file == "grids/a.json");
  CHECK(g.sweep_file_line == 3);
  CHECK_FALSE(g.sweeps);
  CHECK_FALSE(g.retries);
  CHECK_FALSE(g.retry_failed);
  // An inline table is a [sweep] too, in its written order.
  const auto h = parsed("run = \"x\"\nsweep = { b = [1, 2], a = [\"x\"] }\n");
  CHECK(*h.sweeps == std::vector<std::string>{"b=1,2", "a=x"});
}

TEST_CASE("task file: a [sweep] gives the tasks repeated --sweep flags give, in the same order")
{
  JobFlags flags;
  StudyFlags from_file;
  const auto applied = apply_task_file(parsed(k_study), flags, from_file, {});
  CHECK(applied.study);
  CHECK_FALSE(applied.sweep_file);
  CHECK(from_file.array == "%4");
  CHECK(from_file.retries == 3);
  CHECK(from_file.retry_failed);
  const std::string line = rv::app::command_line_of(applied.command);
  auto file_study = rv::app::study::make_study(from_file, line, 600);
  REQUIRE_MESSAGE(file_study.has_value(), (file_study ? "" : file_study.error().message));
  StudyFlags typed; // rv run --array %4 --sweep ... as a user types them
  typed.array = "%4";
  typed.sweeps = {"model=small,it's big", "lr=0.0001,0.0003,0.5,2.0", "seed=7", "fast=true,false"};
  typed.retries = 3;
  typed.retry_failed = true;
  auto flag_study = rv::app::study::make_study(typed, line, 600);
  REQUIRE(flag_study.has_value());
  REQUIRE(file_study->tasks.size() == 2 * 4 * 1 * 2);
  REQUIRE(file_study->tasks.size() == flag_study->tasks.size());
  for (std::size_t i = 0; i < file_study->tasks.size(); ++i) {
    CAPTURE(i);
    CHECK(file_study->tasks[i].id == flag_study->tasks[i].id);
    CHECK(file_study->tasks[i].params == flag_study->tasks[i].params);
    CHECK(file_study->tasks[i].command == flag_study->tasks[i].command);
  }
  // The first key varies slowest; values reach the command shell-quoted.
  CHECK(file_study->tasks.front().command == "python train.py --model small --lr 0.0001 --seed 7");
  CHECK(file_study->tasks.back().command == "python train.py --model 'it'\\''s big' --lr 2.0 --seed 7");
  CHECK(file_study->names == std::vector<std::string>{"model", "lr", "seed", "fast"});
  CHECK(file_study->max_running == 4);
  CHECK(file_study->retries == 3);
}

TEST_CASE("task file: sweep_file is relative to the task file")
{
  struct Case {
    const char* task_file;
    const char* sweep_file;
    const char* path;
  };
  const Case cases[] = {
      {"rv.toml", "grid.json", "grid.json"},
      {"configs/rv.toml", "grid.json", "configs/grid.json"},
      {"configs/rv.toml", "./g/grid.json", "configs/g/grid.json"},
      {"configs/rv.toml", "../grid.json", "grid.json"},
      {"/p/configs/rv.toml", "grid.json", "/p/configs/grid.json"},
      {"configs/rv.toml", "/abs/grid.json", "/abs/grid.json"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.task_file);
    CAPTURE(c.sweep_file);
    auto f = parse_task_file(std::string("run = \"x\"\nsweep_file = \"") + c.sweep_file + "\"\n", c.task_file);
    REQUIRE(f.has_value());
    JobFlags flags;
    StudyFlags study;
    study.sweep_file_text = "stale";
    const auto applied = apply_task_file(*f, flags, study, {});
    CHECK(applied.study);
    CHECK(applied.sweep_file);
    CHECK(study.sweep_file == c.path);
    CHECK(study.sweep_file_text.empty()); // read by command_or_task_file, from this path
  }
}

TEST_CASE("task file: study flags given on the command line win over the study keys")
{
  const auto f = parsed(k_study);
  {
    JobFlags flags;
    StudyFlags study;
    study.array = "%2";
    study.sweeps = {"x=1,2"};
    study.retries = 0;
    study.retry_failed = false; // --no-retry-failed
    const auto applied =
        apply_task_file(f, flags, study, {"array", "sweep", "retries", "retry-failed", "no-retry-failed"});
    CHECK_FALSE(applied.study);
    CHECK(study.array == "%2");
    CHECK(study.sweeps == std::vector<std::string>{"x=1,2"});
    CHECK(study.retries == 0);
    CHECK_FALSE(study.retry_failed);
  }
  {
    // --sweep-file replaces the file's [sweep] (one sweep, either form); the file's array stays.
    JobFlags flags;
    StudyFlags study;
    study.sweep_file = "other.json";
    const auto applied = apply_task_file(f, flags, study, {"sweep-file"});
    CHECK(applied.study);
    CHECK(study.sweeps.empty());
    CHECK(study.sweep_file == "other.json");
    CHECK(study.array == "%4");
    CHECK(study.retries == 3);
  }
  {
    // --sweep replaces the file's sweep_file.
    JobFlags flags;
    StudyFlags study;
    study.sweeps = {"x=1"};
    const auto g = parsed("run = \"x\"\nsweep_file = \"grid.json\"\nretry_failed = false\n");
    const auto applied = apply_task_file(g, flags, study, {"sweep"});
    CHECK_FALSE(applied.sweep_file);
    CHECK(study.sweep_file.empty());
    CHECK(study.sweeps == std::vector<std::string>{"x=1"});
    CHECK_FALSE(study.retry_failed);
  }
  {
    // --retry-failed over retry_failed = false.
    JobFlags flags;
    StudyFlags study;
    study.retry_failed = true;
    apply_task_file(parsed("run = \"x\"\narray = \"0-2\"\nretry_failed = false\n"), flags, study, {"retry-failed"});
    CHECK(study.retry_failed);
    CHECK(study.array == "0-2");
  }
}

TEST_CASE("task file: each mistake in a study key is the flag's own message at the key's line")
{
  struct Case {
    const char* text;
    const char* message;
    const char* hint; // "" = not checked
  };
  const Case cases[] = {
      {"run = \"x\"\narray = \"3-1\"\n", "task.toml:2: --array 3-1: '3-1' ends before it starts", "Slurm's syntax"},
      {"run = \"x\"\narray = \"0-7%0\"\n",
       "task.toml:2: --array 0-7%0: the cap after % must be a whole number of at least 1", "Slurm's syntax"},
      {"run = \"x\"\narray = \"1,,2\"\n", "task.toml:2: --array 1,,2: an empty element (two commas, or one at an end)",
       ""},
      {"run = \"x\"\narray = 4\n", "task.toml:2: array must be a string, not an integer", ""},
      {"run = \"x\"\nsweep = 3\n", "task.toml:2: sweep must be a table ([sweep], NAME = [v1, v2]), not an integer", ""},
      {"run = \"x\"\n[sweep]\nlr = []\n", "task.toml:3: sweep.lr has no values", "lr = [1, 2, 3]"},
      {"run = \"x\"\n[sweep]\nlr = [1, [2]]\n",
       "task.toml:3: sweep.lr must list strings, numbers or booleans, and one item is a list", ""},
      {"run = \"x\"\n[sweep]\nlr = { a = 1 }\n",
       "task.toml:3: sweep.lr must list strings, numbers or booleans, and one item is a table", ""},
      {"run = \"x\"\n[sweep]\nlr = [inf]\n", "task.toml:3: sweep.lr: inf is not a finite number", ""},
      {"run = \"x\"\n[sweep]\nm = [\"a,b\"]\n",
       "task.toml:3: sweep.m: the value 'a,b' holds a comma, which --sweep cannot carry", "sweep_file"},
      {"run = \"x\"\n[sweep]\nm = [\"a\", \"\"]\n", "task.toml:3: --sweep m=a,: an empty value", "--sweep NAME=v1,v2"},
      {"run = \"x\"\n[sweep]\ntask = [1, 2]\n",
       "task.toml:3: --sweep task=1,2: 'task' is the task id's own placeholder", "name the parameter otherwise"},
      {"run = \"x\"\n[sweep]\nlearning-rate = [1]\n",
       "task.toml:3: --sweep learning-rate=1: 'learning-rate' is not a parameter name", ""},
      {"run = \"x\"\n[sweep]\n\"a=b\" = [1]\n", "task.toml:3: sweep: 'a=b' is not a parameter name", ""},
      {"run = \"x\"\nsweep_file = \" \"\n", "task.toml:2: sweep_file is empty", "relative to the task file"},
      {"run = \"x\"\nsweep_file = [\"a.json\"]\n", "task.toml:2: sweep_file must be a string, not a list", ""},
      {"run = \"x\"\nretries = 200\n", "task.toml:2: --retries 200: out of range", "0 to 100"},
      {"run = \"x\"\nretries = -1\n", "task.toml:2: --retries -1: out of range", ""},
      {"run = \"x\"\nretries = \"2\"\n", "task.toml:2: retries must be a whole number, not a string", ""},
      {"run = \"x\"\nretry_failed = \"yes\"\n", "task.toml:2: retry_failed must be true or false, not a string", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const auto e = error_of(c.text);
    CHECK(e.message == c.message);
    if (*c.hint != '\0') {
      CHECK(e.hint.find(c.hint) != std::string::npos);
    }
  }
}

TEST_CASE("task file: rv init's example names the study keys, and they read back uncommented")
{
  const auto& example = rv::cli::example_task_file();
  for (const char* key : {"# array = ", "# sweep_file = ", "# retries = ", "# retry_failed = ", "# [sweep]"}) {
    CAPTURE(key);
    CHECK(example.find(key) != std::string::npos);
  }
  // Uncommented (each `# key = ...` line of the study block), the example is still a valid file.
  std::string text;
  std::istringstream in(example);
  for (std::string l; std::getline(in, l);) {
    for (const char* key :
         {"# array = ", "# retries = ", "# retry_failed = ", "# [sweep]", "# seed = ", "# model = "}) {
      if (l.starts_with(key)) {
        l = l.substr(2);
      }
    }
    text += l + "\n";
  }
  const auto f = parse_task_file(text, "rv.toml");
  REQUIRE_MESSAGE(f.has_value(), (f ? "" : f.error().message));
  CHECK(f->array);
  CHECK(f->sweeps);
  CHECK(f->retries);
  CHECK(f->retry_failed);
}

TEST_CASE("task file: the study flags as rv run parses them, over the study keys")
{
  const auto file = parsed("run = \"x\"\narray = \"0-3%2\"\nretries = 4\nretry_failed = true\n[sweep]\nn = [1]\n");
  struct Case {
    const char* args;
    bool retry_failed;
    int retries;
    const char* array;
    std::vector<std::string> sweeps;
  };
  const Case cases[] = {
      {"", true, 4, "0-3%2", {"n=1"}},
      {"--no-retry-failed", false, 4, "0-3%2", {"n=1"}},
      {"--retry-failed", true, 4, "0-3%2", {"n=1"}},
      {"--retries 0 --array %5", true, 0, "%5", {"n=1"}},
      {"--sweep m=a,b --sweep k=1", true, 4, "0-3%2", {"m=a,b", "k=1"}},
      {"--sweep-file g.json", true, 4, "0-3%2", {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    CLI::App app;
    StudyFlags study;
    rv::cli::add_study_flags(&app, study);
    REQUIRE_NOTHROW(app.parse(c.args, false));
    JobFlags flags;
    apply_task_file(file, flags, study, rv::cli::given_flags(app));
    CHECK(study.retry_failed == c.retry_failed);
    CHECK(study.retries == c.retries);
    CHECK(study.array == c.array);
    CHECK(study.sweeps == c.sweeps);
  }
}

TEST_CASE("task file: prefer is --prefer: read, applied unless the flag is given, and a wrong word is one line")
{
  const auto f = parsed("run = \"x {task}\"\narray = \"0-3\"\nprefer = \"cost\"\n");
  CHECK(f.prefer == "cost");
  {
    JobFlags flags;
    StudyFlags study;
    (void)apply_task_file(f, flags, study, {});
    CHECK(study.prefer == "cost");
    auto st = rv::app::study::make_study(study, "x", 600);
    REQUIRE(st);
    CHECK(st->prefer == rv::app::study::Prefer::cost);
  }
  {
    JobFlags flags;
    StudyFlags study;
    study.prefer = "time"; // --prefer time on the command line
    (void)apply_task_file(f, flags, study, {"prefer"});
    CHECK(study.prefer == "time");
  }
  const auto e = error_of("run = \"x\"\narray = \"0-3\"\nprefer = \"cheap\"\n");
  CHECK(e.message.starts_with("task.toml:3: "));
  CHECK(e.message.find("not time or cost") != std::string::npos);
  CHECK_FALSE(parsed("run = \"x\"\n").prefer);
}
