#include "slurm/submit.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::slurm;

TEST_CASE("submit: job ids and refusals, one result per strategy")
{
  std::vector<Submission> subs = {{"s1", "#!/bin/bash\ntrue\n"}, {"s2", "#!/bin/bash\nfalse\n"}, {"s3", "x"}};
  auto cmds = submit_commands(subs);
  REQUIRE(cmds.size() == 3);
  CHECK(cmds[0].argv == std::vector<std::string>{"sbatch", "--parsable"});
  CHECK(*cmds[1].stdin_data == subs[1].script);
  proc::Outcome ok;
  ok.exit_code = 0;
  ok.out = "1234;rvtest\n";
  proc::Outcome refused;
  refused.exit_code = 1;
  refused.err =
      "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n";
  proc::Outcome garbled;
  garbled.exit_code = 0;
  garbled.out = "hello\n";
  auto results = parse_submit_outcomes(subs, {ok, refused, garbled});
  REQUIRE(results.size() == 3);
  CHECK(results[0].job_id == "1234");
  CHECK(results[0].error.empty());
  CHECK(results[1].job_id.empty());
  CHECK(results[1].error == "Invalid account or account/partition combination specified");
  CHECK(results[2].job_id.empty());
  CHECK_FALSE(results[2].error.empty());
}
