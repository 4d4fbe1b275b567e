#include "slurm/job_ends.hpp"

#include "core/text.hpp"
#include "slurm/jobs.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

namespace rv::slurm {
namespace {

constexpr std::string_view k_name = "rv-job-ends";

} // namespace

proc::Command job_ends_command()
{
  // ElapsedRaw is in seconds, TimelimitRaw in minutes (a word such as UNLIMITED for none). The
  // output of sacct is kept first, so its failure is the command's exit status.
  auto script = fmt::format(
      "out=$(sacct -a -X -n -P -S now-1days -E now -s CD,F,TO,OOM,NF,PR "
      "-o Partition,ElapsedRaw,TimelimitRaw) || exit $?\n"
      "printf '%s\\n' \"$out\" | awk -F'|' '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $2 > 0 && $3 > 0 {{\n"
      "  b = int($2 * {0} / ($3 * 60)); if (b > {0}) b = {0}; n[$1]++; c[$1, b]++\n"
      "}}\n"
      "END {{ for (p in n) {{ printf \"%s %d\", p, n[p]; for (i = 0; i <= {0}; i++) printf \" %d\", c[p, i] + 0; "
      "printf \"\\n\" }} }}'",
      model::EndRatios::steps);
  auto c = patient_command({"sh", "-c", script, std::string(k_name)});
  c.concurrent = true;
  return c;
}

bool is_job_ends_command(const proc::Command& cmd)
{
  return cmd.argv.size() == 4 && cmd.argv[0] == "sh" && cmd.argv[3] == k_name;
}

Result<std::map<std::string, model::EndRatios>> parse_job_ends(std::string_view text)
{
  std::map<std::string, model::EndRatios> out;
  for (const auto& line : text::split(text, "\n")) {
    auto words = text::split_ws(line);
    if (words.empty()) {
      continue;
    }
    if (words.size() != 2 + model::EndRatios::steps + 1) {
      return fail(ErrorCode::parse,
                  fmt::format("job ends: '{}' has {} words, not {}", line, words.size(), 3 + model::EndRatios::steps));
    }
    model::EndRatios r;
    int sum = 0;
    for (std::size_t i = 1; i < words.size(); ++i) {
      auto v = text::to_int(words[i]);
      if (!v || *v < 0 || *v > 1'000'000'000) {
        return fail(ErrorCode::parse, fmt::format("job ends: '{}' is not a count in '{}'", words[i], line));
      }
      if (i == 1) {
        r.jobs = static_cast<int>(*v);
      } else {
        r.counts[i - 2] = static_cast<int>(*v);
        sum += static_cast<int>(*v);
      }
    }
    if (sum != r.jobs) {
      return fail(ErrorCode::parse,
                  fmt::format("job ends: the counts of '{}' add up to {}, not {}", line, sum, r.jobs));
    }
    out[std::string(words[0])] = r;
  }
  return out;
}

} // namespace rv::slurm
