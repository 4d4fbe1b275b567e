#include "app/manage/cluster_status.hpp"

#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;

namespace {

proc::Outcome ok(std::string out)
{
  return test::FakeRunner::reply(0, std::move(out));
}

proc::Outcome failed(std::string err)
{
  return test::FakeRunner::reply(1, {}, std::move(err));
}

// Discovery's 9 outcomes (with a user) for two a100 partitions sharing node a1, and a drained a2.
std::vector<proc::Outcome> discovery()
{
  return {
      ok("a1|gpu|mixed|64|8/56/0/64|512000|64000|gpu:a100:4(S:0-1)|gpu:a100:1(IDX:0)|a100|none\n"
         "a1|long|mixed|64|8/56/0/64|512000|64000|gpu:a100:4(S:0-1)|gpu:a100:1(IDX:0)|a100|none\n"
         "a2|gpu|drained|64|0/64/0/64|512000|0|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|a100|bad gpu\n"
         "c1|cpu|idle|64|0/64/0/64|512000|0|(null)|(null)||none\n"),
      ok("PartitionName=gpu Nodes=a[1-2] State=UP MaxTime=2-00:00:00 TRESBillingWeights=CPU=1.0,GRES/gpu=2.0\n"
         "PartitionName=long Nodes=a1 State=UP MaxTime=7-00:00:00\n"
         "PartitionName=cpu Nodes=c1 State=UP Default=YES\n"),
      failed("scontrol: no nodes\n"), // sinfo stands in for scontrol's nodes
      ok("ClusterName = c\nSLURM_VERSION = 22.05.8\n"),
      ok("+0000 UTC\n"),
      ok("/usr/share/zoneinfo/UTC\n"),
      ok("pyxis_srun=1\nruntime=apptainer\npath=/usr/bin/apptainer\nversion=apptainer version 1.3.4\n"),
      ok("lab||normal|||||\n"),
      ok("normal||||\n"),
      ok("lab\n"),
  };
}

std::vector<RequestRecord> requests()
{
  RequestRecord r;
  r.id = "3f9c02ab";
  r.state = RequestState::submitted;
  JobRecord s1;
  s1.strategy_id = "s1";
  s1.job_id = "101";
  s1.label = "1x a100 direct 1h on gpu";
  JobRecord s2 = s1;
  s2.strategy_id = "s2";
  s2.job_id = "102";
  JobRecord refused = s1;
  refused.strategy_id = "s3";
  refused.job_id.clear();
  r.jobs = {s1, s2, refused};
  RequestRecord ended = r;
  ended.id = "00000001";
  ended.state = RequestState::done;
  return {r, ended};
}

std::vector<proc::Outcome> outcomes(bool quota)
{
  auto o = discovery();
  o.push_back(ok("101|PENDING|Resources|gpu|(null)|1|2026-11-25T14:05:00|N/A|1:00:00|0:00|gres:gpu:a100:1|rv-3f9c02ab\n"
                 "102|RUNNING|None|long|a1|1|2026-11-25T12:00:00|N/A|1:00:00|5:00|gres:gpu:a100:1|rv-3f9c02ab\n"
                 "999|RUNNING|None|cpu|c1|1|2026-11-25T12:00:00|N/A|1:00:00|5:00|N/A|other\n"));
  o.push_back(ok("lab|alice|1|0.5|1234|0.25|0.75\n"));
  o.push_back(ok("Current Association Manager state\n\nAssociation Records\n\n"
                 "ClusterName=c Account=lab UserName= Partition= Priority=0 ID=2\n"
                 "    GrpTRESMins=cpu=N(0),billing=60000(532)\n"
                 "ClusterName=c Account=lab UserName=alice(1000) Partition= Priority=0 ID=3\n"
                 "    GrpJobs=10(2) GrpWall=N(0.00)\n"));
  // billing 10 for 2 h, then a job without billing: its 4 CPUs for 30 min
  o.push_back(ok("201|COMPLETED|0:0|02:00:00|2026-11-20T10:00:00|2026-11-20T12:00:00|a1|billing=10,cpu=2|gpu|x\n"
                 "202|FAILED|1:0|00:30:00|2026-11-21T10:00:00|2026-11-21T10:30:00|c1|cpu=4,mem=1G|cpu|y\n"));
  if (quota) {
    o.push_back(ok("home 1.2G/50G\nscratch 3T/10T\n"));
  }
  return o;
}

} // namespace

TEST_CASE("rv status: one batch of discovery plus squeue, sshare, assoc_mgr, sacct and the quota command")
{
  auto cmds = status_commands("alice", "quota -s");
  REQUIRE(cmds.size() == 15);
  CHECK(cmds[10].argv == std::vector<std::string>{"env", "SLURM_TIME_FORMAT=standard", "squeue", "-h", "-u", "alice",
                                                  "-o", "%i|%T|%r|%P|%N|%D|%S|%e|%l|%M|%b|%j"});
  CHECK(cmds[11].argv.front() == "sshare");
  CHECK(cmds[12].argv == std::vector<std::string>{"scontrol", "show", "assoc_mgr", "users=alice", "flags=assoc"});
  CHECK(cmds[13].argv[2] == "sacct");
  CHECK(std::find(cmds[13].argv.begin(), cmds[13].argv.end(), "now-30days") != cmds[13].argv.end());
  CHECK(cmds[14].argv == std::vector<std::string>{"sh", "-c", "quota -s"});
  CHECK(status_commands("", "").size() == 11); // no user: discovery's 7, squeue --me, no quota
  CHECK(status_commands("", "")[7].argv[4] == "--me");
}

TEST_CASE("rv status: GPUs per partition and type, each node once by type, drained apart")
{
  auto s = parse_status(outcomes(false), requests(), false, 1.0);
  REQUIRE(s.has_value());
  REQUIRE(s->by_partition.size() == 2);
  const auto& gpu = s->by_partition[0];
  CHECK(gpu.partition == "gpu");
  CHECK(gpu.type == "a100");
  CHECK(gpu.total == 8);
  CHECK(gpu.idle == 3); // a1: 4 - 1 used; a2 drained
  CHECK(gpu.unavailable == 4);
  CHECK(gpu.unavailable_nodes == 1);
  CHECK(s->by_partition[1].partition == "long");
  CHECK(s->by_partition[1].total == 4);
  REQUIRE(s->by_type.size() == 1);
  CHECK(s->by_type[0].total == 8); // a1 counted once though it is in two partitions
  CHECK(s->by_type[0].nodes == 2);
  CHECK(s->by_type[0].idle == 3);
  CHECK_FALSE(s->quota.has_value());
}

TEST_CASE("rv status: the active requests' jobs, limits, fair-share, SU and quota")
{
  auto s = parse_status(outcomes(true), requests(), true, 0.5);
  REQUIRE(s.has_value());
  REQUIRE(s->jobs.size() == 2); // the refused sibling and the ended request are not shown
  CHECK(s->jobs[0].job.state == slurm::JobState::pending);
  CHECK(s->jobs[0].job.reason == "Resources");
  CHECK(s->jobs[0].job.start_estimate == "2026-11-25T14:05:00");
  CHECK(s->jobs[1].job.state == slurm::JobState::running);
  CHECK(s->jobs[1].job.node_list == "a1");
  CHECK(s->jobs[1].job.start_estimate.empty());
  REQUIRE(s->limits.size() == 2);
  CHECK(s->limits[0].account == "lab");
  CHECK(s->limits[0].user.empty());
  CHECK(s->limits[0].limit.used == 532);
  CHECK(s->limits[1].user == "alice");
  CHECK(s->limits[1].limit.name == "GrpJobs");
  REQUIRE(s->fairshare.size() == 1);
  CHECK(s->fairshare[0].fair_share == doctest::Approx(0.75));
  CHECK(s->su_30d == doctest::Approx((10 * 2.0 + 4 * 0.5) * 0.5));
  CHECK(s->jobs_30d == 2);
  REQUIRE(s->quota.has_value());
  CHECK(*s->quota == "home 1.2G/50G\nscratch 3T/10T\n");

  auto lines = status_lines(*s);
  auto has = [&](const std::string& needle) {
    return std::any_of(lines.begin(), lines.end(), [&](const auto& l) { return l.find(needle) != std::string::npos; });
  };
  CHECK(has("3f9c02ab s1   101      PENDING: waiting for free GPUs (Resources), est. start 2026-11-25T14:05:00"));
  CHECK(has("3f9c02ab s2   102      RUNNING on a1"));
  CHECK(has("4 GPU(s) on 1 drained/down node(s)"));
  CHECK(has("GrpTRESMins billing"));
  CHECK(has("532 / 60000 (0.9%)"));
  CHECK(has("SU spent in the last 30 days: 11 (2 job(s))"));
  CHECK(has("  scratch 3T/10T"));
  CHECK(lines[0].ends_with("(cluster c, Slurm 22.05.8)")); // read by discovery's scontrol show config
  // The container runtimes, from discovery's probe in the same round trip.
  CHECK(lines[1] ==
        "Containers: pyxis (srun --help), apptainer (/usr/bin/apptainer, 1.3.4) (rv run --container IMAGE)");
  // #24 item 12: what sshare leaves empty is left out ("normalised shares ?" was shown).
  s->fairshare[0].norm_shares.reset();
  s->fairshare[0].effective_usage = 0.25;
  lines = status_lines(*s);
  CHECK(has("Fair-share ("));
  CHECK(has("0.750 (effective usage 0.250)"));
  CHECK_FALSE(has("shares ?"));
  auto j = to_json(*s);
  CHECK(j["slurm_version"] == "22.05.8");
  CHECK(j["cluster"] == "c");
  CHECK(j["requests"][0]["reason_text"] == "waiting for free GPUs");
  CHECK(j["limits"][0]["max"] == 60000);
  CHECK(j["gpus"]["by_type"][0]["total"] == 8);
  CHECK(j["containers"]["pyxis"] == true);
  CHECK(j["containers"]["pyxis_env"] == false); // this Pyxis has no --container-env
  CHECK(j["containers"]["apptainer"] == "apptainer");
}

TEST_CASE("rv status: failed probes are warnings, a wrong outcome count is an error")
{
  auto o = outcomes(false);
  o[11] = failed("sshare: error: Access denied\n");
  o[12] = failed("scontrol: error: PrivateData\n");
  auto s = parse_status(o, requests(), false, 1.0);
  REQUIRE(s.has_value());
  CHECK(s->fairshare.empty());
  CHECK(s->limits.empty());
  CHECK(std::find(s->warnings.begin(), s->warnings.end(), "sshare: exit 1: sshare: error: Access denied") !=
        s->warnings.end());
  CHECK_FALSE(parse_status(std::vector<proc::Outcome>(5), {}, false, 1.0).has_value());
}
