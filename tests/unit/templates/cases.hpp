#pragma once
// Shared inputs for the template tests: every golden file is one of these cases.

#include "core/model/plan.hpp"
#include "core/process/shell.hpp"
#include "sync/deps.hpp"
#include "templates/render.hpp"

#include <string>
#include <tuple>
#include <vector>

namespace rv::templates::testing {

struct Case {
  std::string name; // golden file: tests/data/templates/<name>.sbatch.golden
  model::Strategy strategy;
  model::JobRequest request;
  RenderOptions options;
};

// The quoting torture test: every shell metacharacter a user might type.
inline const std::string k_nasty_command =
    "printf '<%s>\\n' \"it's\" '$HOME' \"$RV_JOB_NAME\" 'a  b' \"back\\`tick\\`\" 'ünïcödé ✓' '*' "
    "\"$(echo sub)\" 'semi;colon' 'pipe|amp&' \"dq\\\"inside\"\n"
    "echo \"second line $((1 + 2))\"; exit 7";

inline RenderOptions base_options(std::string request_id = "r20261122-ab12")
{
  RenderOptions o;
  o.request_id = std::move(request_id);
  o.command = "python train.py --lr 3e-4";
  o.log_dir = "/scratch/alice/.rv/logs";
  o.remote_root = "/scratch/alice/.rv";
  o.checkpoint_root = "/scratch/alice/.rv/checkpoints";
  o.project_key = "myproj-1a2b3c";
  o.output_root = "/scratch/alice/.rv/outputs";
  o.cache_root = "/scratch/alice/.cache/rv";
  return o;
}

inline model::Strategy base_strategy()
{
  model::Strategy s;
  s.id = "s1";
  s.gpu_type = "a100";
  s.partition = "gpu-a100";
  s.gres = "gpu:a100:2";
  s.nodes = 1;
  s.gpus_per_node = 2;
  s.cpus_per_task = 16;
  s.mem_mb_per_node = 65536;
  s.walltime_s = 2 * 3600;
  s.total_time_s = 2 * 3600;
  s.kind = model::StrategyKind::direct;
  return s;
}

inline model::JobRequest base_request()
{
  model::JobRequest r;
  r.gpus = 2;
  r.time_s = 2 * 3600;
  r.account = "rvacct";
  r.job_name = "train";
  return r;
}

inline std::vector<Case> golden_cases()
{
  std::vector<Case> cases;
  {
    Case c{"single_full", base_strategy(), base_request(), base_options()};
    c.strategy.constraint = "a100_80gb&nvlink|\"odd\"";
    c.request.exclude_nodes = {"a100-3", "a100-4"};
    c.request.qos = "normal";
    c.options.command = "torchrun --nproc_per_node=2 train.py --epochs 3";
    c.options.workdir = "/scratch/alice/.rv/workspaces/my proj/snap-1";
    c.options.modules = {"cuda/12.8.0", "miniforge/24.11.3-py3.12"};
    c.options.venv = "/scratch/alice/.rv/envs/my proj";
    c.options.env = {{"WANDB_PROJECT", "it's \"quoted\" $notexpanded"}, {"HF_HUB_OFFLINE", "1"}};
    // What `deps_install: job` adds (cli/smart_exec.cpp), so that the lint sees the real script.
    c.options.setup = sync::deps_job_setup(c.options.venv, {"requirements.txt", "requirements", "0123abcd"},
                                           c.options.workdir + "/requirements.txt");
    c.options.outputs = {"results", "it's a model.pt"};
    cases.push_back(c);
  }
  {
    Case c{"single_nasty_no_request", base_strategy(), base_request(), base_options("")};
    c.strategy.gres.clear();
    c.request.account.clear();
    c.options.command = k_nasty_command;
    cases.push_back(c);
  }
  {
    Case c{"single_time_min", base_strategy(), base_request(), base_options()};
    c.strategy.kind = model::StrategyKind::time_min;
    c.strategy.time_min_s = 30 * 60;
    c.strategy.gpus_per_node = 1;
    c.strategy.gres = "gpu:1";
    c.options.command = "python -m torch.distributed.run --nproc_per_node 1 --master-port 29400 x.py";
    cases.push_back(c);
  }
  {
    Case c{"multi_node_torchrun", base_strategy(), base_request(), base_options()};
    c.strategy.nodes = 2;
    c.strategy.gres = "gpu:a100:4";
    c.strategy.gpus_per_node = 4;
    c.strategy.cpus_per_task = 32;
    c.options.command = "torchrun --nproc_per_node=4 --nnodes 2 train.py --master_port 1";
    c.options.outputs = {"results"};
    cases.push_back(c);
  }
  {
    Case c{"multi_node_accelerate", base_strategy(), base_request(), base_options()};
    c.strategy.nodes = 2;
    c.options.nccl_defaults = false;
    c.options.command = "cd src && accelerate launch --num_processes 4 --main-process-port 0 train.py";
    cases.push_back(c);
  }
  {
    Case c{"checkpoint_requeue", base_strategy(), base_request(), base_options()};
    c.strategy.kind = model::StrategyKind::checkpoint;
    c.strategy.walltime_s = 4 * 3600;
    c.strategy.time_min_s = 3600;
    c.strategy.total_time_s = 12 * 3600;
    c.request.time_s = 12 * 3600;
    c.options.outputs = {"ckpt/final"};
    cases.push_back(c);
  }
  {
    Case c{"checkpoint_resubmit_usr2", base_strategy(), base_request(), base_options("")};
    c.strategy.kind = model::StrategyKind::checkpoint;
    c.strategy.walltime_s = 240;
    c.strategy.total_time_s = 3600;
    c.options.use_requeue = false;
    c.options.signal = "sigusr2";
    c.options.signal_lead_s = 600;
    cases.push_back(c);
  }
  {
    Case c{"checkpoint_multi_node_deepspeed", base_strategy(), base_request(), base_options()};
    c.strategy.kind = model::StrategyKind::checkpoint;
    c.strategy.nodes = 2;
    c.strategy.walltime_s = 3 * 3600;
    c.strategy.total_time_s = 24 * 3600;
    c.options.command = "deepspeed --num_gpus 2 train.py --deepspeed ds.json";
    cases.push_back(c);
  }
  {
    // A study's worker (docs/studies.md): two tasks of a sweep, one with a nasty value.
    Case c{"study_sweep", base_strategy(), base_request(), base_options()};
    c.options.command = "torchrun train.py --lr {lr} --name {name}";
    c.options.study.task_time_s = 1800;
    c.options.study.attempts = 2;
    c.options.study.variables = {"RV_SWEEP_LR", "RV_SWEEP_NAME"};
    c.options.study.tasks = {
        {0, "torchrun train.py --lr 1e-4 --name small", {{"RV_SWEEP_LR", "1e-4"}, {"RV_SWEEP_NAME", "small"}}},
        {1, "torchrun train.py --lr 3e-4 --name 'it'\\''s'", {{"RV_SWEEP_LR", "3e-4"}, {"RV_SWEEP_NAME", "it's"}}}};
    cases.push_back(c);
  }
  {
    // The same study across clusters (docs/studies.md, "Across clusters"): the worker takes offers.
    Case c{"study_offers", base_strategy(), base_request(), base_options()};
    c.options.command = "python train.py --seed {task}";
    c.options.study.task_time_s = 600;
    c.options.study.attempts = 2;
    c.options.study.offers = true;
    c.options.study.offer_wait_s = 45;
    c.options.study.tasks = {{0, "python train.py --seed 0", {}}, {1, "python train.py --seed 1", {}}};
    cases.push_back(c);
  }
  for (const auto& [name, pyxis, nodes] :
       {std::tuple{"container_apptainer_single", false, 1}, std::tuple{"container_apptainer_2node", false, 2},
        std::tuple{"container_pyxis_single", true, 1}, std::tuple{"container_pyxis_2node", true, 2}}) {
    // --container (docs/containers.md): each runtime on one and two nodes, a mount, the venv skipped.
    Case c{name, base_strategy(), base_request(), base_options()};
    c.strategy.nodes = nodes;
    c.options.command = nodes > 1 ? "torchrun --nproc_per_node=2 train.py" : "python train.py --lr 3e-4";
    c.options.workdir = "/scratch/alice/.rv/workspaces/my proj/snap-1";
    c.options.venv = "/scratch/alice/.rv/envs/my proj"; // not activated in a container
    c.options.secrets_file = "/scratch/alice/.rv/requests/r20261122-ab12/env";
    c.options.secret_names = {"HF_TOKEN", "WANDB_API_KEY"};
    model::ContainerOrder order{{model::ImageKind::docker, "docker://nvcr.io/nvidia/pytorch:24.05-py3"},
                                {{"/data/sets", "/data", true}}};
    model::ContainerChoice choice{pyxis ? model::ContainerRuntime::pyxis : model::ContainerRuntime::apptainer,
                                  pyxis ? "" : "apptainer", "found by discovery"};
    choice.pyxis_env = pyxis && nodes > 1; // a newer Pyxis (srun --help lists --container-env)
    c.options.container = ContainerRun{order, choice, false};
    cases.push_back(c);
  }
  return cases;
}

} // namespace rv::templates::testing
