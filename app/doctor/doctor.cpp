// `rv doctor`: the round trips (one for every login-node check, one discovery, one test job) and
// the report's two shapes. The checks themselves are evaluated in doctor_checks.cpp and
// doctor_job.cpp.

#include "app/doctor/doctor.hpp"

#include "app/run/plan/planning.hpp"
#include "core/printable.hpp"
#include "core/process/remote_files.hpp"
#include "core/process/shell.hpp"
#include "core/text.hpp"
#include "slurm/jobs.hpp"
#include "templates/preflight.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace rv::app {

std::string login_script()
{
  auto commands = slurm::required_commands();
  commands.insert(commands.end(), slurm::accounting_commands().begin(), slurm::accounting_commands().end());
  return std::string(proc::remote::abs_path_function()) + "\necho @@commands\nfor c in " + text::join(commands, " ") +
         R"sh(; do
  printf '%s=%s\n' "$c" "$(command -v "$c" 2>/dev/null)"
done
echo @@version
sinfo --version 2>&1 | head -n 1
echo @@user
id -un
echo @@assoc
sacctmgr -n -P show assoc user="$(id -un)" format=cluster,account,partition,qos,defaultqos 2>&1 | head -n 50
echo @@workspace
if r=$(rv_abs "$1" 2>&1); then
  printf 'path=%s\n' "$r"
  if e=$({ mkdir -p -- "$r" && : >"$r/.rv-doctor.$$" && rm -f -- "$r/.rv-doctor.$$"; } 2>&1); then
    echo writable=1
    printf 'avail_kb=%s\n' "$(df -Pk -- "$r" 2>/dev/null | awk 'NR == 2 { print $4 }')"
  else
    echo writable=0
    printf 'error=%s\n' "$(printf '%s' "$e" | head -n 1)"
  fi
else
  echo writable=0
  printf 'error=%s\n' "$r"
fi
echo @@quota
if [ -n "$2" ]; then
  q=$(timeout 20 sh -c "$2" 2>&1)
  rc=$?
  printf '%s\n' "$q" | head -n 20
  echo "rc=$rc"
fi
echo @@tools
printf 'python3=%s\n' "$(command -v python3 >/dev/null 2>&1 && python3 --version 2>&1 | head -n 1)"
printf 'rsync=%s\n' "$(command -v rsync >/dev/null 2>&1 && rsync --version 2>/dev/null | head -n 1)"
true
)sh";
}

std::string job_script(const std::string& site_check, bool required, const std::string& image)
{
  return templates::preflight_node_script(site_check, required) + fmt::format(R"sh(
_rv_pf_node
printf 'node=%s\n' "${{SLURMD_NODENAME:-$(hostname)}}"
printf 'granted=%s\n' "${{SLURM_STEP_GPUS:-${{SLURM_JOB_GPUS:-}}}}"
printf 'cuda_visible_devices=%s\n' "${{CUDA_VISIBLE_DEVICES:-}}"
printf 'nvidia_smi=%s\n' "$(command -v nvidia-smi 2>/dev/null)"
d=""
for f in /dev/nvidia[0-9]*; do
  if [ -e "$f" ]; then d="$d$f "; fi
done
printf 'dev_nvidia=%s\n' "$d"
rt=""
for c in apptainer singularity enroot; do
  if command -v "$c" >/dev/null 2>&1; then rt=$c; break; fi
done
printf 'runtime=%s\n' "$rt"
img={}
if [ -n "$rt" ] && [ -n "$img" ] && [ "$rt" != enroot ]; then
  o=$(timeout 120 "$rt" exec --nv "$img" nvidia-smi -L 2>&1)
  rc=$?
  printf 'container_rc=%s\n' "$rc"
  printf 'container_gpus=%s\n' "$(printf '%s\n' "$o" | grep -c '^GPU ')"
  printf 'container_error=%s\n' "$(printf '%s\n' "$o" | grep -v '^GPU ' | head -n 1)"
fi
)sh",
                                                                              proc::shell_quote(image));
}

namespace {

bool is_connection_error(ErrorCode c)
{
  return c == ErrorCode::unreachable || c == ErrorCode::host_key_unknown || c == ErrorCode::host_key_changed ||
         c == ErrorCode::auth_failed || c == ErrorCode::timeout;
}

void skip_rest(DoctorReport& r, const std::vector<std::string>& names, const std::string& why)
{
  for (const auto& n : names) {
    r.checks.push_back(DoctorCheck{n, CheckStatus::skip, why, {}});
  }
}

const std::vector<std::string> k_job_checks = {"job.start", "job.gpu", "job.devices", "job.container"};

} // namespace

Result<DoctorReport> run_doctor(Env& env, const DoctorOptions& options)
{
  DoctorReport report;
  report.host = env.cluster.where();
  const bool ssh = report.host != "local";
  RV_TRY(profile, load_profile(env.settings.profile));
  // Round trip 1: every login-node check in one shell script (it also opens the connection).
  proc::Command login;
  login.argv = {"sh", "-c", login_script(), "rv-doctor", env.settings.remote_root, profile.quota_command};
  login.timeout = std::chrono::seconds(60);
  auto answer = env.cluster.run(login);
  report.host = env.cluster.where(); // an SSH runner names user@host:port once connected
  if (!answer) {
    if (!ssh || !is_connection_error(answer.error().code)) {
      return std::unexpected(answer.error());
    }
    report.checks = connection_checks(ssh, report.host, answer.error());
    skip_rest(report,
              {"slurm.commands", "slurm.version", "slurm.associations", "slurm.partitions", "workspace.writable",
               "workspace.quota", "login.python3", "login.rsync", "containers"},
              "no connection");
    skip_rest(report, k_job_checks, "no connection");
    report.exit_code = exit_code_for(answer.error().code);
    return report;
  }
  report.checks = connection_checks(ssh, report.host, std::nullopt);
  auto sections = split_sections(answer->out);
  LoginContext lc;
  lc.transport = env.settings.sync.push.transport == sync::Transport::rsync ? "rsync" : "auto";
  lc.quota_configured = !profile.quota_command.empty();
  auto login_checked = login_checks(sections, lc);
  // Round trip 2: discovery, for the partitions and the test job's choice.
  auto assoc = parse_associations(sections["assoc"]);
  auto cluster = discover_cluster(env.cluster);
  std::vector<std::string> partitions;
  for (auto& c : login_checked) {
    report.checks.push_back(std::move(c));
    if (report.checks.back().name != "slurm.associations") {
      continue;
    }
    if (cluster) {
      report.checks.push_back(partitions_check(*cluster, assoc, options.partition));
      partitions = usable_gpu_partitions(*cluster, assoc);
    } else {
      report.checks.push_back(DoctorCheck{"slurm.partitions", CheckStatus::fail,
                                          "discovery failed: " + cluster.error().message, cluster.error().hint});
    }
  }
  report.checks.push_back(cluster ? containers_check(cluster->containers)
                                  : DoctorCheck{"containers", CheckStatus::skip, "discovery failed", {}});
  // Round trip 3: one short GPU job that reports what it sees.
  const auto partition = !options.partition.empty() ? options.partition
                         : partitions.empty()       ? std::string()
                                                    : partitions.front();
  if (options.quick) {
    skip_rest(report, k_job_checks, "--quick");
  } else if (cluster && !options.partition.empty() && std::ranges::find(partitions, partition) == partitions.end()) {
    skip_rest(report, k_job_checks, "--partition " + printable(partition) + " is not usable (slurm.partitions)");
  } else if (partition.empty()) {
    skip_rest(report, k_job_checks, "no GPU partition to test");
  } else {
    const auto image = !options.container_image.empty() ? options.container_image : profile.container_image;
    proc::Command job;
    job.argv =
        slurm::test_job_argv({partition, "rv-doctor", 2, 120},
                             {"bash", "-c", job_script(profile.preflight_command, profile.preflight_required, image)});
    job.timeout = std::chrono::seconds(300);
    RV_TRY(o, env.cluster.run(job));
    for (auto& c : job_checks(o.status(), o.out, o.err, partition, !image.empty())) {
      report.checks.push_back(std::move(c));
    }
  }
  const bool failed = std::any_of(report.checks.begin(), report.checks.end(),
                                  [](const DoctorCheck& c) { return c.status == CheckStatus::fail; });
  report.exit_code = failed ? 1 : 0;
  return report;
}

nlohmann::json to_json(const DoctorReport& report)
{
  nlohmann::json checks = nlohmann::json::array();
  int failed = 0, warnings = 0;
  for (const auto& c : report.checks) {
    failed += c.status == CheckStatus::fail;
    warnings += c.status == CheckStatus::warn;
    checks.push_back({{"name", c.name}, {"status", to_string(c.status)}, {"detail", c.detail}, {"fix", c.fix}});
  }
  return {{"host", report.host},
          {"checks", checks},
          {"failed", failed},
          {"warnings", warnings},
          {"exit_code", report.exit_code}};
}

std::string doctor_text(const DoctorReport& report)
{
  std::string out = fmt::format("rv doctor: {}\n", report.host);
  int failed = 0, warnings = 0;
  for (const auto& c : report.checks) {
    failed += c.status == CheckStatus::fail;
    warnings += c.status == CheckStatus::warn;
    out += fmt::format("  {:<5} {:<19} {}\n", to_string(c.status), c.name, c.detail);
    if ((c.status == CheckStatus::fail || c.status == CheckStatus::warn) && !c.fix.empty()) {
      out += fmt::format("        {:<19} fix: {}\n", "", c.fix);
    }
  }
  out += failed ? fmt::format("{} check{} failed, {} warning{}\n", failed, failed == 1 ? "" : "s", warnings,
                              warnings == 1 ? "" : "s")
                : fmt::format("no check failed ({} warning{})\n", warnings, warnings == 1 ? "" : "s");
  return out;
}

} // namespace rv::app
