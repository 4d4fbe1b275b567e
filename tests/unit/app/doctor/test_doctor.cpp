// `rv doctor`'s evaluations (app/doctor/doctor.hpp) from outputs captured on the testbed
// (tests/data/doctor/: the login script's answer, the test job's answer with and without a fault).

#include "app/doctor/doctor.hpp"
#include "unit/captured_cluster.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::app;
namespace fs = std::filesystem;

namespace {

std::string read(const std::string& name)
{
  std::ifstream in(fs::path(RV_TEST_DATA_DIR) / "doctor" / name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const DoctorCheck& find(const std::vector<DoctorCheck>& checks, const std::string& name)
{
  for (const auto& c : checks) {
    if (c.name == name) {
      return c;
    }
  }
  FAIL("no check " << name);
  static DoctorCheck none;
  return none;
}

// `s` with the line starting with `prefix` replaced by `line`.
std::string replace_line(std::string s, const std::string& prefix, const std::string& line)
{
  auto at = s.find("\n" + prefix);
  REQUIRE(at != std::string::npos);
  auto end = s.find('\n', at + 1);
  return s.replace(at + 1, end - at - 1, line);
}

} // namespace

TEST_CASE("doctor: the testbed's login node passes every login check")
{
  auto sections = split_sections(read("login_testbed.txt"));
  CHECK(sections.size() == 8);
  auto checks = login_checks(sections, {"auto", true});
  for (const auto& c : checks) {
    CAPTURE(c.name);
    CAPTURE(c.detail);
    CHECK((c.status == CheckStatus::ok || c.status == CheckStatus::skip));
  }
  CHECK(find(checks, "slurm.version").detail == "Slurm 22.05.8");
  CHECK(find(checks, "slurm.associations").detail == "rvtest: account rvacct; QOS normal");
  CHECK(find(checks, "workspace.writable").detail.starts_with("/home/rvtest/.rv, 69.1 GiB free"));
  CHECK(find(checks, "workspace.quota").detail.find("252G") != std::string::npos);
  CHECK(find(checks, "login.rsync").detail.starts_with("rsync  version 3"));
  CHECK_FALSE(std::any_of(checks.begin(), checks.end(), [](const auto& c) { return c.name == "containers"; }));
  CHECK(find(login_checks(sections, {"auto", false}), "workspace.quota").status == CheckStatus::skip);
}

TEST_CASE("doctor: each login-node fault is named with its fix")
{
  const auto good = read("login_testbed.txt");
  auto no_rsync = login_checks(split_sections(replace_line(good, "rsync=", "rsync=")), {"auto", false});
  CHECK(find(no_rsync, "login.rsync").status == CheckStatus::warn);
  CHECK(find(no_rsync, "login.rsync").detail.find("no rsync on the login node") != std::string::npos);
  CHECK(find(login_checks(split_sections(replace_line(good, "rsync=", "rsync=")), {"rsync", false}), "login.rsync")
            .status == CheckStatus::fail);

  auto no_sbatch = login_checks(split_sections(replace_line(good, "sbatch=", "sbatch=")), {});
  CHECK(find(no_sbatch, "slurm.commands").status == CheckStatus::fail);
  CHECK(find(no_sbatch, "slurm.commands").detail == "not on the login node's PATH: sbatch");

  auto no_assoc = login_checks(split_sections(replace_line(good, "rvtest|rvacct", "")), {});
  CHECK(find(no_assoc, "slurm.associations").status == CheckStatus::fail);
  CHECK(find(no_assoc, "slurm.associations").fix.find("Invalid account") != std::string::npos);
  auto no_dbd =
      login_checks(split_sections(replace_line(good, "rvtest|rvacct",
                                               "sacctmgr: error: Problem talking to the database: Connection refused")),
                   {});
  CHECK(find(no_dbd, "slurm.associations").status == CheckStatus::warn);

  auto read_only =
      replace_line(replace_line(good, "writable=", "writable=0"),
                   "avail_kb=", "error=mkdir: cannot create directory '/home/rvtest/.rv': Read-only file system");
  auto ro = login_checks(split_sections(read_only), {});
  CHECK(find(ro, "workspace.writable").status == CheckStatus::fail);
  CHECK(find(ro, "workspace.writable").detail.find("Read-only file system") != std::string::npos);

  auto no_python = login_checks(split_sections(replace_line(good, "python3=", "python3=")), {});
  CHECK(find(no_python, "login.python3").status == CheckStatus::warn);
}

TEST_CASE("doctor: the container runtimes come from discovery's probe (slurm/containers.hpp)")
{
  rv::model::ContainerSupport none;
  none.probed = true;
  CHECK(containers_check(none).status == CheckStatus::skip);
  CHECK(containers_check(none).detail == "none found");
  CHECK(containers_check(none).fix.find("Pyxis or Apptainer") != std::string::npos);
  auto apptainer = none;
  apptainer.apptainer = "apptainer";
  apptainer.apptainer_path = "/usr/bin/apptainer";
  apptainer.apptainer_version = "1.3.4";
  CHECK(containers_check(apptainer).status == CheckStatus::ok);
  CHECK(containers_check(apptainer).detail == "apptainer (/usr/bin/apptainer, 1.3.4)");
  auto pyxis = none;
  pyxis.pyxis = true;
  pyxis.pyxis_evidence = "/etc/slurm/plugstack.conf.d/pyxis.conf";
  CHECK(containers_check(pyxis).detail == "pyxis (/etc/slurm/plugstack.conf.d/pyxis.conf)");
  CHECK(containers_check({}).detail == "unknown (the probe did not answer)");
}

TEST_CASE("doctor: the associations as sacctmgr prints them")
{
  auto a = parse_associations("rvtest|rvacct||normal|\nrvtest|lab|gpu-a100|normal,high|normal\n");
  CHECK(a.accounts == std::vector<std::string>{"rvacct", "lab"});
  CHECK(a.partitions == std::vector<std::string>{"gpu-a100"});
  CHECK(a.qos == std::vector<std::string>{"normal", "high"});
  CHECK(parse_associations("sacctmgr: error: Problem talking to the database\n").accounts.empty());
}

TEST_CASE("doctor: the test job's answer, healthy and with an injected fault")
{
  auto ok = job_checks(0, read("job_v100_ok.txt"), "", "gpu-v100", false);
  CHECK(find(ok, "job.start").status == CheckStatus::ok);
  CHECK(find(ok, "job.gpu").status == CheckStatus::ok);
  CHECK(find(ok, "job.gpu").detail == "v100-1: 1/1 GPU(s) visible/granted, driver 535.104.05, CUDA_VISIBLE_DEVICES=0");
  CHECK(find(ok, "job.devices").status == CheckStatus::warn); // the testbed's fake devices are not in /dev
  CHECK(find(ok, "job.container").status == CheckStatus::skip);

  auto bad = job_checks(0, read("job_v100_nodevices.txt"), "", "gpu-v100", false);
  CHECK(find(bad, "job.gpu").status == CheckStatus::fail);
  CHECK(find(bad, "job.gpu").detail == "v100-1: nvidia-smi: No devices were found");
  CHECK(find(bad, "job.gpu").fix.find("cannot see the GPUs Slurm granted") != std::string::npos);

  // #24 item 12: "Requested node configuration is not available" (rv doctor -p cpu) is a partition
  // without GPUs, not "no GPU was free within 2 minutes".
  auto refused = job_checks(1, "", read("job_refused.err"), "cpu", false);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].status == CheckStatus::fail);
  CHECK(refused[0].detail.find("Unable to allocate resources") != std::string::npos);
  CHECK(refused[0].fix.starts_with("no node of cpu has a GPU"));
  auto busy = job_checks(1, "", "srun: error: Unable to allocate resources: Immediate execution impossible\n",
                         "gpu-v100", false);
  REQUIRE(busy.size() == 1);
  CHECK(busy[0].status == CheckStatus::warn);
  CHECK(busy[0].fix.starts_with("no GPU was free"));

  auto container =
      job_checks(0, read("job_v100_ok.txt") + "runtime=apptainer\ncontainer_rc=0\ncontainer_gpus=0\ncontainer_error=\n",
                 "", "gpu-v100", true);
  CHECK(find(container, "job.container").status == CheckStatus::fail);
  CHECK(find(container, "job.container").fix.find("--nv") != std::string::npos);

  // A Pyxis node: enroot is the runtime found, which the test job does not run (no `exec --nv`); not
  // a failure with an empty exit status, and --image would not help.
  for (bool image : {true, false}) {
    CAPTURE(image);
    auto pyxis = job_checks(0, read("job_v100_ok.txt") + "runtime=enroot\n", "", "gpu-v100", image);
    CHECK(find(pyxis, "job.container").status == CheckStatus::skip);
    CHECK(find(pyxis, "job.container").detail ==
          "enroot found (Pyxis): the test job runs an image with Apptainer or Singularity only; rv run --container "
          "checks a Pyxis image's GPUs in its preflight");
  }
}

TEST_CASE("doctor: connection failures name the step that failed and skip the rest")
{
  auto local = connection_checks(false, "local", std::nullopt);
  CHECK(local[0].status == CheckStatus::skip);
  auto ok = connection_checks(true, "ssh rvtest@127.0.0.1:2222", std::nullopt);
  CHECK(ok[2].status == CheckStatus::ok);
  auto key = connection_checks(true, "ssh x@y:22", Error{ErrorCode::host_key_unknown, "not in known_hosts", "hint"});
  CHECK(key[0].status == CheckStatus::ok);
  CHECK(key[1].status == CheckStatus::fail);
  CHECK(key[1].fix == "hint");
  CHECK(key[2].status == CheckStatus::skip);
  auto auth = connection_checks(true, "ssh x@y:22", Error{ErrorCode::auth_failed, "refused every key", ""});
  CHECK(auth[2].status == CheckStatus::fail);
  auto down = connection_checks(true, "ssh x@y:22", Error{ErrorCode::unreachable, "connection refused", ""});
  CHECK(down[0].status == CheckStatus::fail);
  CHECK(down[1].status == CheckStatus::skip);
}

TEST_CASE("doctor: the report's JSON shape and exit code")
{
  DoctorReport r;
  r.host = "local";
  r.checks = {{"login.rsync", CheckStatus::warn, "no rsync", "install it"}, {"job.gpu", CheckStatus::fail, "x", "y"}};
  r.exit_code = 1;
  auto j = to_json(r);
  CHECK(j["checks"][0] ==
        nlohmann::json{{"name", "login.rsync"}, {"status", "warn"}, {"detail", "no rsync"}, {"fix", "install it"}});
  CHECK(j["failed"] == 1);
  CHECK(j["warnings"] == 1);
  CHECK(j["exit_code"] == 1);
  auto text = doctor_text(r);
  CHECK(text.find("warn  login.rsync") != std::string::npos);
  CHECK(text.find("fix: install it") != std::string::npos);
  CHECK(text.find("1 check failed, 1 warning") != std::string::npos);
}

TEST_CASE("doctor: -p names a partition the checks know, --quick or not (a wrong one fails slurm.partitions)")
{
  const auto cluster = rv::testing::captured_cluster_24_11();
  const Associations everyone;
  const auto usable = usable_gpu_partitions(cluster, everyone);
  REQUIRE_FALSE(usable.empty());
  CHECK(partitions_check(cluster, everyone).status == CheckStatus::ok);
  CHECK(partitions_check(cluster, everyone, usable.front()).status == CheckStatus::ok);

  const auto none = partitions_check(cluster, everyone, "nosuchpart");
  CHECK(none.status == CheckStatus::fail);
  CHECK(none.detail.find("--partition nosuchpart: the cluster has no such partition") != std::string::npos);
  CHECK(none.fix.find(usable.front()) != std::string::npos); // the hint lists what works

  // A partition that exists but has no GPU (the 24.11 testbed's CPU partition).
  std::string cpu_only;
  for (const auto& p : cluster.partitions) {
    if (std::ranges::find(usable, p.name) == usable.end()) {
      cpu_only = p.name;
    }
  }
  REQUIRE_FALSE(cpu_only.empty());
  const auto cpu = partitions_check(cluster, everyone, cpu_only);
  CHECK(cpu.status == CheckStatus::fail);
  CHECK(cpu.detail.find("--partition " + cpu_only + ": ") != std::string::npos);
}
