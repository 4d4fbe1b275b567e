#include "cli/study_flags.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rv::cli {

void add_study_flags(CLI::App* cmd, app::study::StudyFlags& f)
{
  cmd->add_option("--array", f.array,
                  "a study: run CMD once per task id, Slurm's syntax (0-15, 1,3,8-10, 0-31%8: at most 8 at once); "
                  "{task} in CMD and RV_TASK_ID are the id (docs/studies.md)")
      ->type_name("SPEC");
  cmd->add_option("--sweep", f.sweeps,
                  "a study over NAME's values (repeat for the cartesian product); {NAME} in CMD and RV_SWEEP_<NAME> "
                  "are the task's value")
      ->type_name("NAME=v1,v2")
      ->allow_extra_args(false);
  cmd->add_option("--sweep-file", f.sweep_file, "a study from a JSON list of objects, one task's parameters each")
      ->type_name("FILE");
  cmd->add_option("--retries", f.retries,
                  "a study's task whose worker died (node failure, preemption, walltime) runs again up to N times "
                  "(default 1)")
      ->type_name("N");
  cmd->add_flag("--retry-failed,!--no-retry-failed", f.retry_failed,
                "a study's task that failed by its own exit status is retried too (within --retries); "
                "--no-retry-failed: not (over a task file's retry_failed)");
  cmd->add_option("--prefer", f.prefer,
                  "a study's pool: time (default) adds pricier GPUs that start sooner when they shorten the study; "
                  "cost keeps to the cheapest GPUs unless they would make it wait far longer")
      ->type_name("time|cost");
  cmd->add_flag("--no-prefix", f.no_prefix, "rv run -f of a study: task output without its `[7] ` prefix");
}

Result<void> read_sweep_file(app::study::StudyFlags& f)
{
  if (f.sweep_file.empty() || !f.sweep_file_text.empty()) {
    return {}; // none, or read already (a task file's, cli/task_file.cpp)
  }
  std::ifstream in(f.sweep_file, std::ios::binary);
  if (!in) {
    return fail(ErrorCode::usage, fmt::format("--sweep-file {}: {}", f.sweep_file, std::strerror(errno)),
                "give a JSON file: [{\"lr\": 1e-4}, {\"lr\": 3e-4}]");
  }
  std::ostringstream text;
  text << in.rdbuf();
  f.sweep_file_text = text.str();
  if (f.sweep_file_text.empty()) {
    return fail(ErrorCode::usage, fmt::format("--sweep-file {}: the file is empty", f.sweep_file),
                "give a JSON list of objects: [{\"lr\": 1e-4}, {\"lr\": 3e-4}]");
  }
  return {};
}

} // namespace rv::cli
