// Field-level checks on individual captured outputs (see ../shared/cases/slurm-outputs/INDEX.md).

#include "slurm/gres.hpp"
#include "slurm/sacct.hpp"
#include "slurm/sbatch.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/squeue.hpp"
#include "slurm/sshare.hpp"
#include "slurm/text.hpp"
#include "unit/skip.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::slurm;
namespace fs = std::filesystem;

namespace {

const fs::path corpus = test::shared_cases_dir() / "slurm-outputs";

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
  if (!test::need_shared_dir(corpus)) {
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
  if (!test::need_shared_dir(corpus)) {
    return;
  }
  auto parts =
      parse_scontrol_partitions(read("scontrol-partition/unige-bamboo-private-gpu-per-type-billing-weights.txt"));
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
  if (!test::need_shared_dir(corpus)) {
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

TEST_CASE("corpus details: squeue layouts beyond rv's own")
{
  if (!test::need_shared_dir(corpus)) {
    return;
  }
  // 0x1E/0x1F with a header: the first job has one field more than the header (its NAME held
  // a 0x1F); the NAME takes it back, so ST is `R`, not the submit time two columns left of it.
  auto osc = parse_squeue(read("squeue/osc-cardinal-squeue-US-separated.txt"));
  REQUIRE(osc.has_value());
  REQUIRE(osc->size() == 4);
  CHECK((*osc)[0].job_id == "6779842");
  CHECK((*osc)[0].state == "RUNNING");
  CHECK((*osc)[0].name == "cupd3_n_fcc_mix_n15\x1f"
                          "cohp");
  CHECK((*osc)[0].partition == "cpu"); // QOS, one column left, says cardinal-default
  CHECK((*osc)[0].nodes == "c0191");   // a NODELIST column, apart from REASON (-o %N %r)
  CHECK((*osc)[0].time_limit_s == 4 * 86400);
  CHECK((*osc)[0].elapsed_s == 3 * 3600 + 52 * 60 + 31);
  REQUIRE((*osc)[0].end_time.has_value());
  CHECK(format_cluster_time(*(*osc)[0].end_time) == "2026-03-14T12:34:51");
  CHECK((*osc)[1].state == "RUNNING");
  CHECK((*osc)[1].reason.empty()); // None
  CHECK((*osc)[3].state == "TIMEOUT");
  CHECK((*osc)[3].reason == "TimeLimit");

  // -O columns 20 wide: REASON `ReqNodeNotAvail, May` runs into TRES_PER_JOB with no blank, so
  // blank splitting keeps only the reason's first word; the job, state and counts still read.
  auto pc = parse_squeue(read("squeue/issue-pcluster-node-178-O-fixed-width-reason-overflow.txt"));
  REQUIRE(pc.has_value());
  REQUIRE(pc->size() == 1);
  CHECK((*pc)[0].job_id == "79");
  CHECK((*pc)[0].state == "PENDING");
  CHECK((*pc)[0].node_count == 1);
  CHECK((*pc)[0].reason == "ReqNodeNotAvail,");

  // Headerless, blank-separated `-o "%.10i %20j %.2t %.5D %.4C %.10m %.16R %.13b"`.
  auto grep =
      parse_squeue(read("squeue/bih-20.02-gres-b-grep-sorted-crlf.txt"), "%.10i %20j %.2t %.5D %.4C %.10m %.16R %.13b");
  REQUIRE(grep.has_value());
  REQUIRE(grep->size() == 7);
  CHECK((*grep)[0].job_id == "1902163");
  CHECK((*grep)[0].name == "ONT-basecalling");
  CHECK((*grep)[0].state == "RUNNING");
  CHECK((*grep)[0].node_count == 1);
  CHECK((*grep)[0].nodes == "med0301");
  CHECK((*grep)[0].tres_per_node == "gpu:tesla:2");
  CHECK((*grep)[6].job_id == "1785264");
  CHECK((*grep)[6].name == "bash");

  // `%i|%E;%R`: two separators; no state column, so the state stays unknown.
  auto rug = parse_squeue(read("squeue/rug-peregrine-i-E-R-null-dependency.txt"), "%i|%E;%R");
  REQUIRE(rug.has_value());
  REQUIRE(rug->size() == 3);
  CHECK((*rug)[0].job_id == "21085523");
  CHECK((*rug)[0].reason == "Priority");
  CHECK((*rug)[2].reason == "JobHeldUser");
  CHECK((*rug)[2].state.empty());

  auto sk = parse_squeue(read("squeue/sckyzo-25.11-tres-alloc-multipartition.txt"), "%i|%a|%u|%P|%T|%D|%C|%?");
  REQUIRE(sk.has_value());
  REQUIRE(sk->size() == 9);
  CHECK(sk->back().job_id == "222");
  CHECK(sk->back().partition == "cpu,gpu");
  CHECK(sk->back().state == "PENDING");
  CHECK((*sk)[7].state == "SUSPENDED");

  // `-O tres-alloc` alone: no job, but the cut TRES (ending in a comma) still reads.
  auto cut = read("squeue/issue-ood_core-870-O-tres-alloc-default-width20-truncated.txt");
  CHECK(parse_squeue(cut)->empty());
  auto tres = parse_tres_map(rv::text::lines(cut).at(1));
  CHECK(tres.at("cpu") == "120");
  CHECK(tres.at("mem") == "515456M");

  auto na = parse_squeue(read("squeue/start-2026-NA-start-maintenance-reason-overflow.txt"));
  REQUIRE(na.has_value());
  REQUIRE(na->size() == 2);
  CHECK_FALSE((*na)[0].start_time.has_value()); // N/A
  CHECK((*na)[0].reason == "ReqNodeNotAvail, Reserved for maintenance");
  CHECK((*na)[0].nodes.empty()); // SCHEDNODES (null)
}

TEST_CASE("corpus details: sacct captures without rv's field order")
{
  if (!test::need_shared_dir(corpus)) {
    return;
  }
  // The header does not start with JobID (`-o User,JobID,...`): it still names the columns.
  auto pitt = parse_sacct(read("sacct/pitt-crc-X-M-alloctres30-fixedwidth.txt"));
  REQUIRE(pitt.has_value());
  REQUIRE(pitt->size() == 1);
  CHECK((*pitt)[0].job_id == "6169876");
  CHECK((*pitt)[0].name == "hello_wor+");
  CHECK((*pitt)[0].alloc_tres == "cpu=1,mem=4018M,node=1");
  CHECK((*pitt)[0].elapsed_s == 1);
  CHECK((*pitt)[0].gpus.empty());

  // `-l`: the job row, its steps (`11751427.ba+`) skipped even when cut.
  auto epfl = parse_sacct(read("sacct/epfl-fidis-sacct-l-wide-plus-truncation.txt"));
  REQUIRE(epfl.has_value());
  REQUIRE(epfl->size() == 1);
  CHECK((*epfl)[0].job_id == "11751427");
  CHECK((*epfl)[0].partition == "serial");

  // AllocTRES or AllocGRES alone: no JobID, so no job rows; the values themselves read.
  auto jobstats = read("sacct/issue-jobstats-6-P-X-noheader-alloctres-exclusive.txt");
  CHECK(parse_sacct(jobstats, "AllocTRES")->empty());
  auto gpus = parse_tres_gpus(rv::text::trim(jobstats));
  REQUIRE(gpus.has_value());
  REQUIRE(gpus->size() == 1);
  CHECK((*gpus)[0].type == "rtx2080ti");
  CHECK((*gpus)[0].count == 4);

  auto gres = read("sacct/sckyzo-17.11.2-allocgres.txt");
  CHECK(parse_sacct(gres, "AllocGRES")->empty());
  int total = 0;
  for (auto line : rv::text::lines(gres)) {
    auto g = parse_gres(line);
    REQUIRE(g.has_value());
    total += total_gpus(*g);
  }
  CHECK(total == 4 + 7 + 1 + 1 + 1);
}

TEST_CASE("squeue: the user's other jobs are those not of the request (comment rv:<id>)")
{
  using namespace rv::slurm;
  const auto argv = my_jobs_argv();
  CHECK(std::find(argv.begin(), argv.end(), "--me") != argv.end());
  CHECK(argv.back() == std::string(request_jobs_format));
  const auto jobs = parse_squeue("801|RUNNING|rv:ab12cd34|ttg-w\n"
                                 "802|PENDING|rv:ab12cd34|ttg-w\n"
                                 "803|PENDING|(null)|train.sh\n"
                                 "804|RUNNING|rv:99999999|other|study\n",
                                 request_jobs_format);
  REQUIRE(jobs);
  REQUIRE(jobs->size() == 4);
  CHECK(jobs_not_of(*jobs, "ab12cd34") == 2); // the user's sbatch and another rv request
  CHECK(jobs_not_of(*jobs, "") == 4);         // before the study exists: all of them
  CHECK(jobs_not_of({}, "ab12cd34") == 0);
}
