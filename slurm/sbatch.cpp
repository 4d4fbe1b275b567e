#include "slurm/sbatch.hpp"

#include "slurm/text.hpp"

#include <fmt/format.h>

namespace rv::slurm {
namespace {

// Consumes `word` (plus one blank) at the front of `s`.
bool eat(std::string_view& s, std::string_view word)
{
  s = text::trim(s);
  if (s.substr(0, word.size()) != word) {
    return false;
  }
  s.remove_prefix(word.size());
  return true;
}

std::string_view next_word(std::string_view& s)
{
  s = text::trim(s);
  auto sp = s.find(' ');
  auto w = s.substr(0, sp);
  s.remove_prefix(sp == std::string_view::npos ? s.size() : sp);
  return w;
}

} // namespace

Result<TestOnlyEstimate> parse_test_only(std::string_view input)
{
  TestOnlyEstimate e;
  bool found = false;
  std::string failure;
  for (auto raw : text::lines(input)) {
    auto line = text::trim(raw);
    if (line.empty()) {
      continue;
    }
    if (line.starts_with("sbatch: ")) {
      line.remove_prefix(8);
    }
    if (line.starts_with("allocation failure: ") || line.starts_with("error: ")) {
      failure = line.substr(line.find(": ") + 2);
      continue;
    }
    auto rest = line;
    if (eat(rest, "Preempts:")) {
      e.preempts = text::comma_list(rest);
      continue;
    }
    if (!eat(rest, "Job ") || found) {
      e.messages.emplace_back(line);
      continue;
    }
    e.job_id = next_word(rest);
    if (!eat(rest, "to start at")) {
      e.messages.emplace_back(line);
      continue;
    }
    auto when = next_word(rest);
    auto t = parse_cluster_time(when);
    if (!t || !*t) {
      return fail(ErrorCode::parse, fmt::format("unexpected start time '{}' in sbatch --test-only output", when),
                  "rv expects YYYY-MM-DDTHH:MM:SS; is SLURM_TIME_FORMAT set on the cluster?");
    }
    e.start = **t;
    if (eat(rest, "on cluster")) {
      e.cluster = next_word(rest);
    }
    eat(rest, "a "); // 25.05+ prints `... a using` (an upstream typo)
    if (!eat(rest, "using")) {
      return fail(ErrorCode::parse, fmt::format("unexpected sbatch --test-only line '{}'", line));
    }
    e.processors = text::to_int32(next_word(rest)).value_or(0);
    next_word(rest); // "processors" (or "cnodes")
    if (eat(rest, "on nodes")) {
      e.nodes = next_word(rest);
    } else if (eat(rest, "on")) { // heterogeneous jobs: `on <nodes>`
      e.nodes = next_word(rest);
    }
    if (eat(rest, "in partition")) {
      e.partition = next_word(rest);
    }
    found = true;
  }
  if (!found && !failure.empty()) {
    return fail(ErrorCode::slurm_rejected, fmt::format("Slurm would not schedule the job: {}", failure));
  }
  if (!found) {
    return fail(ErrorCode::parse, fmt::format("no 'Job ... to start at' line in sbatch --test-only output: '{}'",
                                              text::trim(input).substr(0, 200)));
  }
  return e;
}

Result<Submitted> parse_sbatch_parsable(std::string_view input)
{
  for (auto raw : text::lines(input)) {
    auto line = text::trim(raw);
    auto semi = line.find(';');
    auto id = line.substr(0, semi);
    if (!id.empty() && text::to_int(id) && *text::to_int(id) > 0) {
      return Submitted{std::string(id), semi == std::string_view::npos ? "" : std::string(line.substr(semi + 1))};
    }
  }
  return fail(ErrorCode::parse,
              fmt::format("no job id in sbatch --parsable output: '{}'", text::trim(input).substr(0, 200)));
}

} // namespace rv::slurm
