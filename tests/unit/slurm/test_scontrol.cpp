#include "slurm/scontrol.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace rv;
using namespace rv::slurm;

namespace {
const char* node_multi = "NodeName=gpu01 Arch=x86_64 CoresPerSocket=16 \r\n"
                         "   CPUAlloc=8 CPUEfctv=64 CPUTot=64 CPULoad=1.00\r\n"
                         "   AvailableFeatures=a100,ib\r\n"
                         "   Gres=gpu:a100:4(S:0-1)\r\n"
                         "   GresUsed=gpu:a100:2(IDX:0-1)\r\n"
                         "   NodeAddr=gpu01 NodeHostName=gpu01 Version=22.05.8\r\n"
                         "   OS=Linux 5.15.0 #1 SMP  Tue Jan 1 \r\n"
                         "   RealMemory=512000 AllocMem=64000 FreeMem=400000 Sockets=2 Boards=1\r\n"
                         "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\r\n"
                         "   Partitions=gpu,debug \r\n"
                         "   CfgTRES=cpu=64,mem=500G,billing=64\r\n"
                         "   AllocTRES=cpu=8,mem=62.50G\r\n"
                         "\r\n"
                         "NodeName=gpu02 CPUAlloc=0 CPUTot=64 Gres=gpu:a100:4 State=IDLE+DRAIN RealMemory=512000 "
                         "Partitions=gpu Reason=bad gpu [root@2026-01-01T00:00:00]\n";
}

TEST_CASE("parse_scontrol_nodes reads multi-line and one-line records")
{
  auto nodes = parse_scontrol_nodes(node_multi);
  REQUIRE(nodes.has_value());
  REQUIRE(nodes->size() == 2);
  const auto& a = (*nodes)[0];
  CHECK(a.name == "gpu01");
  CHECK(a.cpus_total == 64);
  CHECK(a.cpus_alloc == 8);
  CHECK(a.mem_mb == 512000);
  CHECK(a.alloc_mem_mb == 64000);
  CHECK(a.gpus_total() == 4);
  CHECK(a.gpus_used_known);
  CHECK(a.gpus_free() == 2);
  CHECK(a.partitions == std::vector<std::string>{"gpu", "debug"});
  CHECK(a.features == std::vector<std::string>{"a100", "ib"});
  CHECK(a.usable);
  const auto& b = (*nodes)[1];
  CHECK_FALSE(b.usable);
  CHECK(b.reason == "bad gpu [root@2026-01-01T00:00:00]");
  CHECK_FALSE(b.gpus_used_known);
}

TEST_CASE("parse_records keeps values with blanks and exact keys")
{
  auto r = parse_records("JobId=5 JobName=x\n   ReqNodeList=(null) ExcNodeList=wn-[01-02]\n   NodeList=gpu07\n"
                         "   Command=/bin/run.sh --flag a b\n   NtasksPerTRES:0\n");
  REQUIRE(r.has_value());
  REQUIRE(r->size() == 1);
  CHECK((*r)[0].value("NodeList") == "gpu07");
  CHECK((*r)[0].value("ReqNodeList").empty());
  CHECK((*r)[0].value("Command") == "/bin/run.sh --flag a b");
  CHECK(parse_records("No reservations in the system\n")->empty());
}

TEST_CASE("parse_scontrol_partitions reads limits, billing and access lists")
{
  const char* text = "PartitionName=gpu-a100\n"
                     "   AllowGroups=ALL AllowAccounts=lab1,lab2 AllowQos=ALL\n"
                     "   AllocNodes=ALL Default=YES QoS=gpu_qos\n"
                     "   DefaultTime=01:00:00 DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
                     "   MaxNodes=2 MaxTime=3-00:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
                     "   Nodes=a100-[1-2]\n"
                     "   PriorityJobFactor=1 PriorityTier=2 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
                     "   State=UP TotalCPUs=128 TotalNodes=2 SelectTypeParameters=NONE\n"
                     "   DefMemPerGPU=65536 DefCpuPerGPU=8 MaxMemPerNode=UNLIMITED\n"
                     "   TRES=cpu=128,mem=1000G,node=2,billing=128,gres/gpu=8\n"
                     "   TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0,GRES/gpu:a100=3\n\n";
  auto parts = parse_scontrol_partitions(text);
  REQUIRE(parts.has_value());
  REQUIRE(parts->size() == 1);
  const auto& p = (*parts)[0];
  CHECK(p.name == "gpu-a100");
  CHECK(p.is_default);
  CHECK(p.nodes == std::vector<std::string>{"a100-1", "a100-2"});
  CHECK(p.max_time_s == 3 * 86400);
  CHECK(p.default_time_s == 3600);
  CHECK(p.max_nodes == 2);
  CHECK(p.max_cpus_per_node == -1);
  CHECK(p.def_mem_per_gpu_mb == 65536);
  CHECK(p.def_cpu_per_gpu == 8);
  CHECK(p.allow_accounts == std::vector<std::string>{"lab1", "lab2"});
  CHECK(p.allow_qos.empty());
  CHECK(p.qos == "gpu_qos");
  CHECK(p.priority_tier == 2);
  CHECK(p.total_gpus == 8);
  CHECK(p.billing.present);
  CHECK(p.billing.cpu == doctest::Approx(1.0));
  CHECK(p.billing.mem_per_gb == doctest::Approx(0.25));
  CHECK(p.billing.gpu == doctest::Approx(2.0));
  CHECK(p.billing.gpu_by_type.at("a100") == doctest::Approx(3.0));
}

TEST_CASE("parse_billing_weights converts memory units to per GiB")
{
  CHECK(parse_billing_weights("Mem=0.083333333G")->mem_per_gb == doctest::Approx(0.083333333));
  CHECK(parse_billing_weights("Mem=1")->mem_per_gb == doctest::Approx(1024.0)); // bare = per MB
  CHECK(parse_billing_weights("Mem=1T")->mem_per_gb == doctest::Approx(1.0 / 1024.0));
  CHECK_FALSE(parse_billing_weights("(null)")->present);
  CHECK(parse_billing_weights("CPU=1,Node=5")->other.at("Node") == doctest::Approx(5.0));
  CHECK_FALSE(parse_billing_weights("CPU=abc").has_value());
}

TEST_CASE("parse_scontrol_config reads scheduler settings")
{
  const char* text = "Configuration data as of 2026-11-22T04:00:00\n"
                     "AccountingStorageTRES   = cpu,mem,energy,node,billing,gres/gpu\n"
                     "ClusterName             = rvtest\n"
                     "DefMemPerCPU            = UNLIMITED\n"
                     "JobRequeue              = 0\n"
                     "PriorityFlags           = CALCULATE_RUNNING,MAX_TRES\n"
                     "SchedulerParameters     = bf_interval=45,bf_resolution=120,bf_window=2880,bf_max_job_user=4,"
                     "bf_continue,bf_min_age_reserve=600\n"
                     "SchedulerType           = sched/backfill\n"
                     "SLURM_VERSION           = 22.05.8\r\n"
                     "\nCgroup Support Configuration:\nClusterName = other\n";
  auto c = parse_scontrol_config(text);
  REQUIRE(c.has_value());
  CHECK(c->cluster_name == "rvtest");
  CHECK(c->slurm_version == "22.05.8");
  CHECK(c->bf_interval_s == 45);
  CHECK(c->bf_resolution_s == 120);
  CHECK(c->bf_window_min == 2880);
  CHECK(c->bf_max_job_user == 4);
  CHECK(c->bf_max_job_test == 100);
  CHECK(c->bf_continue);
  CHECK(c->bf_min_age_reserve_s == 600);
  CHECK(c->max_tres);
  CHECK_FALSE(c->max_tres_gres);
  CHECK_FALSE(c->requeue_allowed);
  CHECK(c->def_mem_per_cpu_mb == 0);
  CHECK(c->scheduler_type == "sched/backfill");
  CHECK(c->priority_type.empty()); // not in this text
  CHECK_FALSE(parse_scontrol_config("nothing here").has_value());
}

TEST_CASE("parse_scontrol_jobs reads state, nodes, exit code and times")
{
  const char* text = "JobId=42 JobName=train\n"
                     "   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n"
                     "   ExitCode=130:9\n"
                     "   RunTime=00:10:00 TimeLimit=02:00:00 TimeMin=01:00:00\n"
                     "   SubmitTime=2026-11-22T03:00:00 EligibleTime=2026-11-22T03:00:00\n"
                     "   StartTime=2026-11-22T04:05:42 EndTime=2026-11-22T04:15:42 Deadline=N/A\n"
                     "   Partition=gpu AllocNode:Sid=login1:123\n"
                     "   ReqNodeList=(null) ExcNodeList=(null)\n"
                     "   NodeList=a100-2\n"
                     "   BatchHost=a100-2\n"
                     "   NumNodes=1 NumCPUs=8 NumTasks=1 CPUs/Task=8 ReqB:S:C:T=0:0:*:*\n"
                     "   TRES=cpu=8,mem=64G,node=1,billing=8,gres/gpu=2\n"
                     "   TresPerNode=gres:gpu:2\n";
  auto jobs = parse_scontrol_jobs(text);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 1);
  const auto& j = (*jobs)[0];
  CHECK(j.job_id == "42");
  CHECK(j.state == "FAILED");
  CHECK(j.reason == "NonZeroExitCode");
  CHECK(j.nodes == "a100-2");
  CHECK(j.batch_host == "a100-2");
  CHECK(j.exit_status == 130);
  CHECK(j.exit_signal == 9);
  CHECK(j.time_limit_s == 7200);
  CHECK(j.time_min_s == 3600);
  CHECK(j.run_time_s == 600);
  REQUIRE(j.start_time.has_value());
  CHECK(format_cluster_time(*j.start_time) == "2026-11-22T04:05:42");
  CHECK(j.gpus.size() == 1);
  CHECK(j.gpus[0].count == 2);
}

TEST_CASE("parse_scontrol_jobs: a pending job has no NodeList even with ReqNodeList set")
{
  auto jobs = parse_scontrol_jobs("JobId=7 JobState=PENDING Reason=Priority\n   ReqNodeList=gpu01 ExcNodeList=(null)\n"
                                  "   NodeList=(null)\n   StartTime=Unknown EndTime=Unknown TimeLimit=UNLIMITED\n");
  REQUIRE(jobs.has_value());
  CHECK((*jobs)[0].nodes.empty());
  CHECK_FALSE((*jobs)[0].start_time.has_value());
  CHECK((*jobs)[0].time_limit_s == -1);
}

TEST_CASE("parse_scontrol_partitions bounds the hosts of all partitions together")
{
  std::string text;
  for (int i = 0; i < 3; ++i) {
    text += fmt::format("PartitionName=p{} Nodes=p{}n[0-49999] State=UP\n", i, i);
  }
  auto parts = parse_scontrol_partitions(text);
  REQUIRE_FALSE(parts);
  CHECK(parts.error().code == ErrorCode::parse);
  CHECK(parts.error().message == "partitions list more than 100000 hosts in all");
  CHECK(parse_scontrol_partitions("PartitionName=p Nodes=n[0-99999] State=UP\n")->front().nodes.size() == 100'000);
}

TEST_CASE("parse_scontrol_jobs rejects GPUs per node times nodes past an int")
{
  auto job = [](const char* per_node, const char* nodes) {
    return fmt::format("JobId=7 JobName=x JobState=RUNNING TRES=cpu=8,mem=64G NumNodes={} TresPerNode={}\n", nodes,
                       per_node);
  };
  // 4 GPUs x 1,000,000,000 nodes used to overflow int.
  auto r = parse_scontrol_jobs(job("gres:gpu:a100:4", "1000000000"));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::parse);
  CHECK(r.error().message == "job 7: 4 GPUs per node on 1000000000 nodes is more than 2147483647");
  auto ok = parse_scontrol_jobs(job("gres:gpu:a100:4", "2-3"));
  REQUIRE(ok.has_value());
  CHECK(ok->front().gpus.front().count == 8);
}

TEST_CASE("node and partition numbers past what any node has count as unknown")
{
  // CPUTot x GPUs overflowed int in the planner, RealMemory x GPUs int64, and MaxNodes=2^32 truncated to 0.
  auto nodes = parse_scontrol_nodes("NodeName=n1 CPUTot=2147483647 CPUAlloc=99999 RealMemory=9223372036854775807 "
                                    "AllocMem=1099511627777 Gres=gpu:a100:8 State=IDLE\n");
  REQUIRE(nodes.has_value());
  CHECK(nodes->front().cpus_total == 0);
  CHECK(nodes->front().cpus_alloc == 0);
  CHECK(nodes->front().mem_mb == 0);
  CHECK(nodes->front().alloc_mem_mb == 0);
  auto real = parse_scontrol_nodes("NodeName=n1 CPUTot=16384 RealMemory=1073741824 Gres=gpu:a100:8 State=IDLE\n");
  CHECK(real->front().cpus_total == 16384);
  CHECK(real->front().mem_mb == 1073741824);
  auto parts = parse_scontrol_partitions("PartitionName=p Nodes=n1 MaxNodes=4294967296 MaxCPUsPerNode=2147483648 "
                                         "DefMemPerGPU=9223372036854775807 DefCpuPerGPU=2147483647 "
                                         "MaxMemPerCPU=1073741825 DefMemPerCPU=-5\n");
  REQUIRE(parts.has_value());
  const auto& p = parts->front();
  CHECK(p.max_nodes == -1);
  CHECK(p.max_cpus_per_node == -1);
  CHECK(p.def_mem_per_gpu_mb == 0);
  CHECK(p.def_cpu_per_gpu == 0);
  CHECK(p.max_mem_per_cpu_mb == 0);
  CHECK(p.def_mem_per_cpu_mb == 0);
}

TEST_CASE("parse_records stays linear in the number of fields of one record" * doctest::timeout(5.0))
{
  // Each field used to be looked up among all the record's fields before it: 200,000 fields in
  // 2 MB of output took minutes.
  std::string text = "NodeName=x";
  for (int i = 0; i < 200'000; ++i) {
    text += fmt::format(" K{}=v", i);
  }
  text += " K7=again";
  auto records = parse_records(text);
  REQUIRE(records.has_value());
  REQUIRE(records->size() == 1);
  CHECK(records->front().fields.size() == 200'001);
  CHECK(records->front().value("K7") == "v"); // the first of a repeated key wins, as before
}

TEST_CASE("RecordReader: views into the text, a key printed twice is kept twice in the view, once in Record")
{
  const std::string text = "JobId=1 Name=a Reason=x y Reason=z\n   Comment=rv:ab\nJobId=2 Name=b\n";
  RecordReader reader(text);
  const auto* first = reader.next();
  REQUIRE(first != nullptr);
  CHECK(first->fields.size() == 5);
  CHECK(first->value("Reason") == "x y"); // the first of a repeated key wins
  CHECK(first->value("Comment") == "rv:ab");
  // A view, not a copy: the value points into `text`.
  CHECK(first->get("Name")->data() == text.data() + text.find("a Reason"));
  auto owned = Record::from(*first);
  CHECK(owned.fields.size() == 4);
  CHECK(owned.value("Reason") == "x y");
  const auto* second = reader.next();
  REQUIRE(second != nullptr);
  CHECK(second->value("JobId") == "2");
  CHECK(second->value("Name") == "b");
  CHECK(reader.next() == nullptr);
  CHECK(RecordReader("No jobs in the system\n").next() == nullptr);
  CHECK(RecordReader("").next() == nullptr);
}

TEST_CASE("scontrol show config: the controller, SlurmctldHost[0] or (before 18.08) ControlMachine")
{
  auto now = parse_scontrol_config("ClusterName = a\nSlurmctldHost[0] = ctl1(10.0.0.1)\nSlurmctldHost[1] = ctl2\n");
  REQUIRE(now);
  CHECK(now->controller == "ctl1(10.0.0.1)");
  auto old = parse_scontrol_config("ClusterName = a\nControlMachine = ctl-old\n");
  REQUIRE(old);
  CHECK(old->controller == "ctl-old");
  auto none = parse_scontrol_config("ClusterName = a\n");
  REQUIRE(none);
  CHECK(none->controller.empty());
}
