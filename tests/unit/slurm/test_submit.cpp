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

TEST_CASE("submit: an sbatch killed by its timeout, by a signal, or with an unreadable answer may have created its "
          "job (N3)")
{
  std::vector<Submission> subs = {{"s1", "a"}, {"s2", "b"}, {"s3", "c"}, {"s4", "d"}, {"s5", "e"}, {"s6", "f"}};
  proc::Outcome killed; // `timeout -k 5 60 sbatch`: 124, or 137 once the -k fired
  killed.exit_code = 124;
  proc::Outcome signalled;
  signalled.signal = 9;
  proc::Outcome rpc;
  rpc.exit_code = 1;
  rpc.err = "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n";
  proc::Outcome garbled;
  garbled.exit_code = 0;
  garbled.out = "hello\n";
  proc::Outcome refused;
  refused.exit_code = 1;
  refused.err = "sbatch: error: Batch job submission failed: Requested node configuration is not available\n";
  auto r = parse_submit_outcomes(subs, {killed, signalled, rpc, garbled, refused}); // s6: no answer at all
  REQUIRE(r.size() == 6);
  CHECK(r[0].uncertain);
  CHECK(r[1].uncertain);
  CHECK(r[2].uncertain);
  CHECK(r[3].uncertain);
  CHECK_FALSE(r[4].uncertain); // Slurm said no: no job
  CHECK(r[5].uncertain);
  for (const auto& x : r) {
    CHECK(x.job_id.empty());
  }
}
