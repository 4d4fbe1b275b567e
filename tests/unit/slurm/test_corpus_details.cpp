// Field-level checks on individual captured outputs (see ../shared/cases/slurm-outputs/INDEX.md).

#include "slurm/sacct.hpp"
#include "slurm/sbatch.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/squeue.hpp"
#include "slurm/sshare.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::slurm;
namespace fs = std::filesystem;

namespace {

const fs::path corpus = fs::path(RV_SHARED_CASES_DIR) / "slurm-outputs";

std::string read(const char* rel)
{
  std::ifstream in(corpus / rel, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("corpus details: scontrol show job")
{
  if (!fs::is_directory(corpus)) {
    MESSAGE("skipped: no corpus");
    return;
  }
  auto one = [](const char* rel) {
    auto jobs = parse_scontrol_jobs(read(rel));
    REQUIRE(jobs.has_value());
    REQUIRE(jobs->size() == 1);
    return (*jobs)[0];
  };
  auto bih = one("scontrol-job/bih-20.02-gpu-job-trespernode-legacy-no-gres-prefix-crlf.txt");
  CHECK(bih.state == "FAILED");
  CHECK(bih.exit_status == 130);
  CHECK(bih.nodes == "med0301");
  REQUIRE(bih.gpus.size() == 1); // TRES has no gpu: TresPerNode=gpu:tesla:4 x 1 node
  CHECK(bih.gpus[0].type == "tesla");
  CHECK(bih.gpus[0].count == 4);
  auto pending = one("scontrol-job/toil-rapthor-21.x-pending-reqnodenotavail-dedented.txt");
  CHECK(pending.state == "PENDING");
  CHECK(pending.nodes.empty()); // ReqNodeList=wn-db-05 is not the allocation
  CHECK(pending.raw.value("ReqNodeList") == "wn-db-05");
  CHECK(pending.reason == "ReqNodeNotAvail,_UnavailableNodes:wn-db-05");
  CHECK_FALSE(pending.start_time.has_value());
  auto running = one("scontrol-job/toil-rapthor-21.x-running-excnodelist-dedented.txt");
  CHECK(running.nodes == "wn-ha-01");
  CHECK(running.raw.value("ExcNodeList") == "wn-ca-[01-02],wn-db-[01-06]");
  auto dep = one("scontrol-job/bih-20.02-pending-dependency-crlf.txt");
  CHECK(dep.reason == "DependencyNeverSatisfied");
}

TEST_CASE("corpus details: scontrol show partition")
{
  if (!fs::is_directory(corpus)) {
    MESSAGE("skipped: no corpus");
    return;
  }
  auto parts = parse_scontrol_partitions(read("scontrol-partition/unige-bamboo-private-gpu-per-type-billing-weights.txt"));
  REQUIRE(parts.has_value());
  REQUIRE(parts->size() == 1);
  const auto& u = (*parts)[0];
  CHECK(u.nodes == std::vector<std::string>{"gpu004"});
  CHECK(u.total_gpus == 1);
  CHECK(u.billing.gpu == doctest::Approx(1.0));
  CHECK(u.billing.mem_per_gb == doctest::Approx(0.25));
  CHECK(u.billing.gpu_by_type.size() == 19); // INDEX.md says 20: it counts GRES/gpu too
  CHECK(u.billing.gpu_by_type.at("nvidia_rtx_pro_6000_blackwell") == doctest::Approx(16.0));
  CHECK(u.billing.gpu_by_type.at("tesla_p100-pcie-12gb") == doctest::Approx(1.0));

  parts = parse_scontrol_partitions(read("scontrol-partition/tudelft-daic-general-gpu-billing-mixed-hostlist.txt"));
  REQUIRE(parts.has_value());
  CHECK((*parts)[0].nodes.size() == 59); // TotalNodes=59
  CHECK((*parts)[0].total_gpus == -1);   // no TRES= line
  CHECK((*parts)[0].billing.gpu == doctest::Approx(16.0));

  parts = parse_scontrol_partitions(read("scontrol-partition/osc-owens-show-part-oneline.txt"));
  REQUIRE(parts.has_value());
  CHECK(parts->size() == 15); // 14 captured in 2023 plus the appended `dynamic`
  CHECK((*parts)[0].name == "batch");
  CHECK((*parts)[0].total_gpus == 154);
  CHECK(parts->back().total_gpus == -1); // TRES=(null)

  parts = parse_scontrol_partitions(read("scontrol-partition/pitt-crc-htc-M-two-partitions-zero-weights.txt"));
  REQUIRE(parts.has_value());
  REQUIRE(parts->size() == 2);
  CHECK((*parts)[1].billing.present);
  CHECK((*parts)[1].billing.cpu == doctest::Approx(0.0));

  parts = parse_scontrol_partitions(read("scontrol-partition/uiuc-campuscluster-stat-gres-gpu.txt"));
  REQUIRE(parts.has_value());
  CHECK((*parts)[0].nodes.size() == 18);
  CHECK((*parts)[0].total_gpus == 12);
}

TEST_CASE("corpus details: squeue, sacct, sshare, sbatch")
{
  if (!fs::is_directory(corpus)) {
    MESSAGE("skipped: no corpus");
    return;
  }
  auto start = parse_squeue(read("squeue/start-sdsc-expanse-2022-schednodes-hostlists-hash-stripped.txt"));
  REQUIRE(start.has_value());
  REQUIRE(start->size() == 4);
  CHECK((*start)[1].nodes == "exp-2-[02-03]");
  CHECK((*start)[1].reason == "Priority");
  REQUIRE((*start)[1].start_time.has_value());
  CHECK(format_cluster_time(*(*start)[1].start_time) == "2022-07-31T23:21:40");

  auto bih = parse_squeue(read("squeue/bih-20.02-o-b-trespernode-NA-vs-gpu-crlf.txt"));
  REQUIRE(bih.has_value());
  CHECK(bih->size() == 38);
  CHECK((*bih)[3].tres_per_node == "gpu:tesla:4");
  CHECK((*bih)[0].tres_per_node.empty());
  CHECK((*bih)[0].state == "RUNNING");

  auto mig = parse_sacct(read("sacct/issue-slurm-mail-142-P-alloctres-mig-3g20gb-gres-cpu.txt"));
  REQUIRE(mig.has_value());
  REQUIRE(mig->size() == 2); // .batch and .extern skipped
  CHECK((*mig)[0].gpus.at(0).type == "a100_3g.20gb");

  auto snow = parse_sacct(read("sacct/rug-peregrine-snowman-delimiter-tresusage.txt"),
                          "JobID,JobName,User,Partition,NodeList,NNodes,ncpus,NTasks,State,Submit,start,end");
  REQUIRE(snow.has_value());
  REQUIRE_FALSE(snow->empty());
  CHECK((*snow)[0].state == "COMPLETED");
  CHECK((*snow)[0].nodes == "mycluster2-node111");

  auto jh = parse_sacct(read("sacct/jhpce-fixedwidth-alloctres-gpu-truncated-plus.txt"));
  REQUIRE(jh.has_value());
  REQUIRE(jh->size() == 1);
  CHECK(jh->at(0).gpus.at(0).type == "tesa100");

  auto share = parse_sshare(read("sshare/aau-biocloud-sshare-default-truncated-user.txt"));
  REQUIRE(share.has_value());
  CHECK(share->at(1).user == "abc@bio.a+");
  CHECK(share->at(1).fair_share == doctest::Approx(0.115183));
  CHECK_FALSE(share->at(0).fair_share.has_value());

  auto andes = parse_test_only(read("sbatch-test-only/olcf-andes-2019-hostlist-range.txt"));
  REQUIRE(andes.has_value());
  CHECK(andes->processors == 64);
  CHECK(andes->nodes == "andes[499-500]");
  CHECK(andes->partition == "batch");
}
