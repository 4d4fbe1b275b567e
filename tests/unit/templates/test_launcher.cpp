#include "templates/launcher.hpp"

#include <doctest/doctest.h>

using namespace rv::templates;

TEST_CASE("launcher: plain commands are left alone")
{
  auto out = inject_launcher_flags("python train.py --master_port 1", false);
  CHECK(out.kind == LauncherKind::none);
  CHECK(out.command == "python train.py --master_port 1");
  CHECK(out.injected.empty());
}

TEST_CASE("launcher: single-node torchrun gets a master port")
{
  auto out = inject_launcher_flags("torchrun --nproc_per_node=4 train.py", false);
  CHECK(out.kind == LauncherKind::torchrun);
  CHECK(out.command == "torchrun --master_port=\"$MASTER_PORT\" --nproc_per_node=4 train.py");
}

TEST_CASE("launcher: a given port, in either spelling, is kept")
{
  for (const char* cmd : {"torchrun --master-port 1 t.py", "torchrun --master_port=1 t.py",
                          "torchrun --standalone t.py", "torchrun --rdzv-endpoint=h:1 t.py"}) {
    auto out = inject_launcher_flags(cmd, false);
    CHECK(out.command == cmd);
  }
}

TEST_CASE("launcher: flags after the script belong to the script")
{
  auto out = inject_launcher_flags("torchrun train.py --master_port 5", false);
  CHECK(out.command == "torchrun --master_port=\"$MASTER_PORT\" train.py --master_port 5");
}

TEST_CASE("launcher: python -m torch.distributed.run, with env prefix and a path")
{
  auto out = inject_launcher_flags("FOO='a b' /opt/bin/python3.11 -m torch.distributed.run t.py", false);
  CHECK(out.command == "FOO='a b' /opt/bin/python3.11 -m torch.distributed.run --master_port=\"$MASTER_PORT\" t.py");
  auto launch = inject_launcher_flags("python -m torch.distributed.launch t.py", false);
  CHECK(launch.kind == LauncherKind::torchrun);
}

TEST_CASE("launcher: multi-node torchrun gets the rendezvous flags not given")
{
  auto out = inject_launcher_flags("torchrun --nnodes=2 --nproc_per_node 4 t.py", true);
  CHECK(out.command == "torchrun --node_rank=\"$NODE_RANK\" --master_addr=\"$MASTER_ADDR\" "
                       "--master_port=\"$MASTER_PORT\" --nnodes=2 --nproc_per_node 4 t.py");
  CHECK(out.injected == std::vector<std::string>{"--node_rank", "--master_addr", "--master_port"});
}

TEST_CASE("launcher: accelerate launch and deepspeed")
{
  auto acc = inject_launcher_flags("accelerate launch --machine-rank 0 t.py", true);
  CHECK(acc.kind == LauncherKind::accelerate);
  CHECK(acc.command == "accelerate launch --num_machines=\"$RV_NNODES\" --main_process_ip=\"$MASTER_ADDR\" "
                       "--main_process_port=\"$MASTER_PORT\" --machine-rank 0 t.py");
  auto ds = inject_launcher_flags("deepspeed t.py", false);
  CHECK(ds.command == "deepspeed --master_port=\"$MASTER_PORT\" t.py");
  auto ds_multi = inject_launcher_flags("deepspeed --hostfile h t.py", true);
  CHECK(ds_multi.command.find("--no_ssh") == std::string::npos);
  CHECK(ds_multi.command.find("--node_rank=\"$NODE_RANK\"") != std::string::npos);
}

TEST_CASE("launcher: launchers after operators, quotes left untouched")
{
  auto out = inject_launcher_flags("cd 'a;b' && torchrun t.py \"x;torchrun\"; echo done", false);
  CHECK(out.command == "cd 'a;b' && torchrun --master_port=\"$MASTER_PORT\" t.py \"x;torchrun\"; echo done");
  auto quoted = inject_launcher_flags("echo 'torchrun t.py'", false);
  CHECK(quoted.kind == LauncherKind::none);
  auto comment = inject_launcher_flags("# torchrun t.py\necho hi", false);
  CHECK(comment.kind == LauncherKind::none);
}

TEST_CASE("launcher: launchers the one grammar finds (each case failed with templates' own reader)")
{
  const std::pair<const char*, const char*> cases[] = {
      {"time torchrun t.py", "time torchrun --master_port=\"$MASTER_PORT\" t.py"},
      {"uv run torchrun t.py", "uv run torchrun --master_port=\"$MASTER_PORT\" t.py"},
      {"python3.13t -m torch.distributed.run t.py",
       "python3.13t -m torch.distributed.run --master_port=\"$MASTER_PORT\" t.py"},
      {"python -u -m torch.distributed.run t.py",
       "python -u -m torch.distributed.run --master_port=\"$MASTER_PORT\" t.py"},
      {"python -m accelerate.commands.launch t.py",
       "python -m accelerate.commands.launch --main_process_port=\"$MASTER_PORT\" t.py"},
      // The module ends torchrun's options: the port after it is the module's own flag.
      {"torchrun -m pkg.train --master_port 5", "torchrun --master_port=\"$MASTER_PORT\" -m pkg.train --master_port 5"},
      // In double quotes `\_` keeps its backslash: torchrun would not read this as its port flag.
      {"torchrun \"--master\\_port=1\" t.py", "torchrun --master_port=\"$MASTER_PORT\" \"--master\\_port=1\" t.py"},
      {"torchrun --no_python ./run.sh --master_port 5",
       "torchrun --master_port=\"$MASTER_PORT\" --no_python ./run.sh --master_port 5"},
  };
  for (const auto& [in, want] : cases) {
    CAPTURE(in);
    CHECK(inject_launcher_flags(in, false).command == want);
  }
}

TEST_CASE("launcher: continued lines and redirections keep every byte")
{
  auto out = inject_launcher_flags("torchrun \\\n  --standalone t.py 2>&1 | tee log\ndeepspeed t.py", false);
  CHECK(out.command ==
        "torchrun \\\n  --standalone t.py 2>&1 | tee log\ndeepspeed --master_port=\"$MASTER_PORT\" t.py");
  CHECK(out.kind == LauncherKind::torchrun); // the first launcher found
}
