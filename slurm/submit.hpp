#pragma once
// Submits every rendered script of a request in one round trip (`sbatch --parsable`, script
// on stdin), so a fan-out of 16 costs one SSH exchange, not 16.

#include "core/process/runner.hpp"

#include <string>
#include <vector>

namespace rv::slurm {

// One script to submit.
struct Submission {
  std::string strategy_id;
  std::string script; // the full batch script, #SBATCH lines included
};

// What happened to one submission: a job id, or Slurm's reason for refusing it.
struct SubmitResult {
  std::string strategy_id;
  std::string job_id; // "" when refused
  std::string error;  // Slurm's message when refused
  // No job id, yet the job may exist: sbatch timed out or was killed (slurmctld may have created
  // the job before the answer came back), its answer could not be read, or none came. The caller
  // searches by the request's comment before it calls the strategy refused (N3).
  bool uncertain = false;
};

// The commands: `sbatch --parsable` reading each script from stdin.
std::vector<proc::Command> submit_commands(const std::vector<Submission>& submissions);

// Reads the outcomes of `submit_commands`, one result per submission (a refusal does not stop
// the others).
std::vector<SubmitResult> parse_submit_outcomes(const std::vector<Submission>& submissions,
                                                const std::vector<proc::Outcome>& outcomes);

// Submits all of `submissions` in one `run_batch`.
Result<std::vector<SubmitResult>> submit_all(proc::Runner& runner, const std::vector<Submission>& submissions);

} // namespace rv::slurm
