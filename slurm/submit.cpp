#include "slurm/submit.hpp"

#include "slurm/sbatch.hpp"

#include <fmt/format.h>

namespace rv::slurm {
namespace {

// The last non-empty line of Slurm's stderr: the reason, without the `sbatch: error: ` prefix.
std::string reason_of(const proc::Outcome& o)
{
  std::string text = o.err.empty() ? o.out : o.err;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  auto nl = text.rfind('\n');
  std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
  for (const char* prefix : {"sbatch: error: Batch job submission failed: ", "sbatch: error: "}) {
    if (last.starts_with(prefix)) {
      last = last.substr(std::string(prefix).size());
      break;
    }
  }
  return last.empty() ? fmt::format("sbatch exited {}", o.status()) : last;
}

// Whether a failed sbatch may have created its job all the same: killed by its timeout
// (`timeout` exits 124, or 137 after its -k) or by a signal, or Slurm's own RPC timeout, after
// which slurmctld may still have queued the job (docs/slurm-quirks.md).
bool may_have_created(const proc::Outcome& o)
{
  if (o.timed_out || o.signal != 0 || o.exit_code < 0 || o.exit_code == 124 || o.exit_code >= 128) {
    return true;
  }
  return (o.err + o.out).find("timed out") != std::string::npos;
}

} // namespace

std::vector<proc::Command> submit_commands(const std::vector<Submission>& submissions)
{
  std::vector<proc::Command> cmds;
  cmds.reserve(submissions.size());
  for (const auto& s : submissions) {
    proc::Command c;
    c.argv = {"sbatch", "--parsable"};
    c.stdin_data = s.script;
    c.timeout = std::chrono::seconds(60);
    cmds.push_back(std::move(c));
  }
  return cmds;
}

std::vector<SubmitResult> parse_submit_outcomes(const std::vector<Submission>& submissions,
                                                const std::vector<proc::Outcome>& outcomes)
{
  std::vector<SubmitResult> results;
  for (std::size_t i = 0; i < submissions.size(); ++i) {
    SubmitResult r{submissions[i].strategy_id, "", "", false};
    if (i >= outcomes.size()) {
      r.error = "no answer from sbatch";
      r.uncertain = true;
    } else if (!outcomes[i].ok()) {
      r.error = reason_of(outcomes[i]);
      r.uncertain = may_have_created(outcomes[i]);
    } else if (auto parsed = parse_sbatch_parsable(outcomes[i].out)) {
      r.job_id = parsed->job_id;
    } else {
      r.error = "cannot read sbatch's answer: " + parsed.error().message;
      r.uncertain = true;
    }
    results.push_back(std::move(r));
  }
  return results;
}

Result<std::vector<SubmitResult>> submit_all(proc::Runner& runner, const std::vector<Submission>& submissions)
{
  RV_TRY(outcomes, runner.run_batch(submit_commands(submissions)));
  return parse_submit_outcomes(submissions, outcomes);
}

} // namespace rv::slurm
