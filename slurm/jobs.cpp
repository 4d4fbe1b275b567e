#include "slurm/jobs.hpp"

#include "core/text.hpp"

namespace rv::slurm {

proc::Command command(std::vector<std::string> argv, std::chrono::seconds timeout)
{
  proc::Command c;
  c.argv = std::move(argv);
  c.timeout = timeout;
  return c;
}

proc::Command patient_command(std::vector<std::string> argv)
{
  auto c = command(std::move(argv), std::chrono::seconds(60));
  c.repeatable = true;
  return c;
}

proc::Command concurrent_read(std::vector<std::string> argv)
{
  auto c = command(std::move(argv));
  c.concurrent = true;
  c.repeatable = true;
  return c;
}

std::vector<std::string> step_argv(const StepOptions& o, const std::vector<std::string>& program)
{
  const auto n = std::to_string(o.nodes);
  std::vector<std::string> argv = {"srun", "--jobid=" + o.job_id, "--overlap", "--nodes=" + n, "--ntasks=" + n};
  if (o.labelled) {
    argv.insert(argv.end(), {"--ntasks-per-node=1", "--label", "--quiet"});
  }
  if (!o.nodelist.empty()) {
    argv.push_back("--nodelist=" + text::join(o.nodelist, ","));
  }
  if (o.pty) {
    argv.push_back("--pty");
  }
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::vector<std::string> show_job_argv(const std::string& job_id, bool one_line)
{
  if (one_line) {
    return {"scontrol", "-o", "show", "job", job_id};
  }
  return {"scontrol", "show", "job", job_id};
}

std::vector<std::string> show_node_argv(const std::string& node)
{
  return {"scontrol", "-o", "show", "node", node};
}

std::vector<std::string> test_job_argv(const TestJobOptions& o, const std::vector<std::string>& program)
{
  std::vector<std::string> argv = {"srun",
                                   "--partition=" + o.partition,
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--gres=gpu:1",
                                   "--time=" + std::to_string(o.minutes),
                                   "--immediate=" + std::to_string(o.immediate_s),
                                   "--job-name=" + o.job_name};
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

const std::vector<std::string>& required_commands()
{
  static const std::vector<std::string> c = {"sbatch", "squeue", "scontrol", "scancel", "sinfo", "srun"};
  return c;
}

const std::vector<std::string>& accounting_commands()
{
  static const std::vector<std::string> c = {"sacct", "sacctmgr"};
  return c;
}

} // namespace rv::slurm
