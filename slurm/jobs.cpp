#include "slurm/jobs.hpp"

#include "core/duration.hpp"
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
  if (!o.name.empty()) {
    argv.push_back("--job-name=" + o.name);
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

std::vector<std::string> detached_argv(const std::vector<std::string>& argv)
{
  std::vector<std::string> out = {"sh", "-c", "setsid nohup \"$@\" </dev/null >/dev/null 2>&1 &", "sh"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> steps_argv(const std::string& job_id)
{
  return {"squeue", "-h", "--steps", "-j", job_id, "-o", "%i|%M|%N|%j"};
}

std::vector<JobStep> parse_steps(std::string_view text)
{
  std::vector<JobStep> steps;
  for (auto line : text::lines(text)) {
    // J.S|elapsed|nodes|name: the name last, so a `|` in it stays in it.
    const auto a = line.find('|');
    const auto b = a == std::string_view::npos ? a : line.find('|', a + 1);
    const auto c = b == std::string_view::npos ? b : line.find('|', b + 1);
    if (c == std::string_view::npos) {
      continue;
    }
    const auto id = text::trim(line.substr(0, a));
    const auto dot = id.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == id.size()) {
      continue;
    }
    JobStep s;
    s.job_id = std::string(id.substr(0, dot));
    s.step_id = std::string(id.substr(dot + 1));
    auto elapsed = parse_slurm_time(text::trim(line.substr(a + 1, b - a - 1)));
    s.elapsed_s = elapsed && *elapsed > 0 ? *elapsed : 0;
    s.nodes = std::string(text::trim(line.substr(b + 1, c - b - 1)));
    s.name = std::string(line.substr(c + 1));
    steps.push_back(std::move(s));
  }
  return steps;
}

std::vector<std::string> cancel_step_argv(const std::string& job_id, const std::string& step_id)
{
  return {"scancel", job_id + "." + step_id};
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
