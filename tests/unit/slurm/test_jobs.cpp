// squeue, sacct, sshare and the cluster time helpers.

#include "slurm/cluster_time.hpp"
#include "slurm/sacct.hpp"
#include "slurm/squeue.hpp"
#include "slurm/sshare.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::slurm;

TEST_CASE("squeue_argv pins the format and the time format")
{
  auto argv = squeue_argv({"10", "11"});
  CHECK(argv == std::vector<std::string>{"env", "SLURM_TIME_FORMAT=standard", "squeue", "-h", "-t", "all", "-j",
                                         "10,11", "-o", "%i|%T|%r|%P|%N|%D|%S|%e|%l|%M|%b|%j"});
}

TEST_CASE("parse_squeue reads rv's format")
{
  const char* text =
      "10|RUNNING|None|gpu|a100-[1-2]|2|2026-11-22T04:05:42|2026-11-22T06:05:42|2:00:00|5:03|gres:gpu:2|train|x\r\n"
      "11|PENDING|(Priority)|gpu,gpu-h100||1|N/A|N/A|UNLIMITED|0:00|N/A|eval\n"
      "\n";
  auto jobs = parse_squeue(text);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 2);
  const auto& r = (*jobs)[0];
  CHECK(r.state == "RUNNING");
  CHECK(r.reason.empty());
  CHECK(r.nodes == "a100-[1-2]");
  CHECK(r.node_count == 2);
  CHECK(r.start_time.has_value());
  CHECK(r.time_limit_s == 7200);
  CHECK(r.elapsed_s == 303);
  CHECK(r.tres_per_node == "gres:gpu:2");
  CHECK(r.name == "train|x");
  const auto& p = (*jobs)[1];
  CHECK(p.reason == "Priority");
  CHECK(p.partition == "gpu,gpu-h100");
  CHECK(p.nodes.empty());
  CHECK_FALSE(p.start_time.has_value());
  CHECK(p.time_limit_s == -1);
  CHECK_FALSE(parse_squeue("12|RUNNING|None|gpu|n1|1|14:24:22|N/A|1:00|0:01|N/A|x\n").has_value());
}

TEST_CASE("parse_squeue reads a --start table by its header")
{
  const char* text =
      "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           "
      "NODELIST(REASON)\n"
      "            909870   general evictv1-     sv96 PD                 N/A      1 (null)               "
      "(ReqNodeNotAvail, Reserved for maintenance)\n"
      "          14820268   compute    basic    zli89 PD 2022-07-31T23:21:40      2 exp-2-[02-03]        (Priority)\n";
  auto jobs = parse_squeue(text);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 2);
  CHECK((*jobs)[0].state == "PENDING");
  CHECK((*jobs)[0].reason == "ReqNodeNotAvail, Reserved for maintenance");
  CHECK_FALSE((*jobs)[0].start_time.has_value());
  CHECK((*jobs)[1].nodes == "exp-2-[02-03]");
  CHECK(format_cluster_time(*(*jobs)[1].start_time) == "2022-07-31T23:21:40");
  CHECK(long_job_state("CG") == "COMPLETING");
  CHECK(long_job_state("timeout") == "TIMEOUT");
}

TEST_CASE("parse_squeue splits a headerless -o format by its own separators")
{
  // Blank-padded columns: any run of blanks separates, a right-justified id leads with blanks.
  auto blank =
      parse_squeue("   1902163 ONT-basecalling       R     1    2         8G          med0301   gpu:tesla:2\r\n"
                   "   1785264 bash                  R     1    1         1G          med0304   gpu:tesla:2\n",
                   "%.10i %20j %.2t %.5D %.4C %.10m %.16R %.13b");
  REQUIRE(blank.has_value());
  REQUIRE(blank->size() == 2);
  CHECK((*blank)[0].job_id == "1902163");
  CHECK((*blank)[0].name == "ONT-basecalling");
  CHECK((*blank)[0].state == "RUNNING");
  CHECK((*blank)[0].node_count == 1);
  CHECK((*blank)[0].nodes == "med0301");
  CHECK((*blank)[0].tres_per_node == "gpu:tesla:2");
  // Two different separators; a line short of a separator is not this format.
  auto mixed =
      parse_squeue("21085523|(null);(Priority)\n18120717|(null);(JobHeldUser)\nno separators here\n", "%i|%E;%R");
  REQUIRE(mixed.has_value());
  REQUIRE(mixed->size() == 2);
  CHECK((*mixed)[0].reason == "Priority");
  CHECK((*mixed)[1].job_id == "18120717");
  CHECK((*mixed)[1].reason == "JobHeldUser");
  // A last field other than %j ends at the next separator; a last %j keeps every one.
  auto extra = parse_squeue("7|RUNNING|more\n", "%i|%T");
  REQUIRE(extra.has_value());
  CHECK(extra->at(0).state == "RUNNING");
  auto name = parse_squeue("7|RUNNING| a|b \n", "%i|%T|%j");
  REQUIRE(name.has_value());
  CHECK(name->at(0).name == " a|b");
  // Literal text before the first field (`\x1e%i...`).
  auto prefixed = parse_squeue("\x1e"
                               "8\x1f"
                               "PENDING\n",
                               "\x1e%i\x1f%T");
  REQUIRE(prefixed.has_value());
  REQUIRE(prefixed->size() == 1);
  CHECK(prefixed->at(0).job_id == "8");
  CHECK(prefixed->at(0).state == "PENDING");
}

TEST_CASE("parse_squeue reads -O headers and gives a NAME that held the delimiter its fields back")
{
  // -O jobid,name,state,nodelist,reason,endtime,partition with 0x1F: the first job's name holds a 0x1F.
  const char* text = "\x1eJOBID\x1fNAME\x1fST\x1fNODELIST\x1fREASON\x1f"
                     "END_TIME\x1fPARTITION\n"
                     "\x1e"
                     "1\x1f"
                     "a\x1f"
                     "b\x1fR\x1f"
                     "c1\x1fNone\x1f"
                     "2026-03-14T12:34:51\x1f"
                     "cpu\n"
                     "\x1e"
                     "2\x1f"
                     "plain\x1fTO\x1f"
                     "c2\x1fTimeLimit\x1f"
                     "2026-03-14T12:00:00\x1fquick\n";
  auto jobs = parse_squeue(text);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 2);
  CHECK((*jobs)[0].name == "a\x1f"
                           "b");
  CHECK((*jobs)[0].state == "RUNNING"); // not the node name one column right of it
  CHECK((*jobs)[0].nodes == "c1");
  CHECK((*jobs)[0].reason.empty());
  CHECK((*jobs)[0].partition == "cpu");
  REQUIRE((*jobs)[0].end_time.has_value());
  CHECK(format_cluster_time(*(*jobs)[0].end_time) == "2026-03-14T12:34:51");
  CHECK((*jobs)[1].state == "TIMEOUT");
  CHECK((*jobs)[1].reason == "TimeLimit");
  CHECK((*jobs)[1].nodes == "c2");
}

TEST_CASE("parse_sacct skips steps and splits state and exit code")
{
  const char* text = "20|CANCELLED by 0|0:15|00:01:02|2026-11-22T04:00:00|2026-11-22T04:01:02|a100-1|"
                     "billing=8,cpu=8,gres/gpu:a100=1,gres/gpu=1,mem=32G,node=1|gpu|train\n"
                     "20.batch|CANCELLED|0:15|00:01:02|2026-11-22T04:00:00|2026-11-22T04:01:02|a100-1|cpu=8|gpu|batch\n"
                     "20.extern|COMPLETED|0:0|00:01:02|2026-11-22T04:00:00|2026-11-22T04:01:02|a100-1||gpu|extern\n"
                     "21|PENDING|0:0|00:00:00|Unknown|Unknown|None assigned||gpu|a|b\n";
  auto jobs = parse_sacct(text);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 2);
  CHECK((*jobs)[0].state == "CANCELLED");
  CHECK((*jobs)[0].state_detail == "CANCELLED by 0");
  CHECK((*jobs)[0].exit_signal == 15);
  CHECK((*jobs)[0].elapsed_s == 62);
  CHECK((*jobs)[0].gpus.at(0).type == "a100");
  CHECK((*jobs)[1].nodes.empty());
  CHECK_FALSE((*jobs)[1].start_time.has_value());
  CHECK((*jobs)[1].name == "a|b");
}

TEST_CASE("parse_sacct uses a header when one is printed, also fixed-width")
{
  auto jobs = parse_sacct("JobID|AllocTRES\n8117657|billing=64,cpu=9,gres/gpu:a100_3g.20gb=1,gres/gpu=1\n"
                          "8117657.batch|cpu=9\n");
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].gpus.at(0).type == "a100_3g.20gb");
  const char* fixed =
      "JobID           JobName  Partition                                AllocTRES                State \n"
      "------------ ---------- ---------- ---------------------------------------- -------------------- \n"
      "2907783            bash        gpu billing=102410,cpu=8,gres/gpu:tesa100=1+            COMPLETED \n"
      "2907783.ext+     extern            billing=102410,cpu=8,gres/gpu:tesa100=1+            COMPLETED \n";
  jobs = parse_sacct(fixed);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].partition == "gpu");
  CHECK((*jobs)[0].state == "COMPLETED");
  // A header led by another column (`-o User,JobID,...`) still names them.
  const char* user_first = "     User        JobID    JobName                      AllocTRES    Elapsed\n"
                           "--------- ------------ ---------- ------------------------------ ----------\n"
                           "    nlc60 6169876      hello_wor+         cpu=1,mem=4018M,node=1   00:00:01\n";
  jobs = parse_sacct(user_first);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].job_id == "6169876");
  CHECK((*jobs)[0].alloc_tres == "cpu=1,mem=4018M,node=1");
  CHECK((*jobs)[0].elapsed_s == 1);
  // rv's own order, a first job named JobID: a row, not a header.
  jobs = parse_sacct("30|COMPLETED|0:0|00:00:05|Unknown|Unknown|n1||gpu|JobID\n");
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].name == "JobID");
}

TEST_CASE("parse_sshare reads parsable rows and the default table")
{
  auto rows = parse_sshare("root|||0.000000|500000||\n root|user1|1|0.100000|0|0.000000|1.000000\n");
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[1].user == "user1");
  CHECK((*rows)[1].fair_share == doctest::Approx(1.0));
  CHECK_FALSE((*rows)[0].fair_share.has_value());
  rows = parse_sshare("Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
                      "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n"
                      "a_group1                  user1          1    0.000472   720200160      0.014297   0.000392\n");
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].fair_share == doctest::Approx(0.000392));
}

TEST_CASE("cluster times convert with the cluster's offset, not the laptop's")
{
  auto t = parse_cluster_time("2026-11-22T04:05:42");
  REQUIRE(t.has_value());
  REQUIRE(t->has_value());
  CHECK(to_unix_seconds(**t, 0) == 1795320342);
  CHECK(to_unix_seconds(**t, 3600) == 1795320342 - 3600);
  CHECK(*parse_utc_offset("+0100") == 3600);
  CHECK(*parse_utc_offset("-0530") == -19800);
  CHECK(*parse_utc_offset("+05:30") == 19800);
  CHECK_FALSE(parse_utc_offset("CET").has_value());
  CHECK_FALSE(parse_cluster_time("Unknown")->has_value());
  CHECK_FALSE(parse_cluster_time("14:24:22").has_value()); // SLURM_TIME_FORMAT=relative
}
