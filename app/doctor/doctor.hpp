#pragma once
// `rv doctor` (docs/doctor.md): an ordered set of checks that names the cause of the common
// failures, each with its fix. The evaluations are pure (captured outputs in, checks out:
// app/doctor/doctor_checks.cpp); run_doctor() makes the round trips (app/doctor/doctor.cpp).

#include "app/env.hpp"
#include "core/model/cluster.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

enum class CheckStatus { ok, warn, fail, skip };
std::string_view to_string(CheckStatus s);

// One check: a stable dotted name (docs/doctor.md lists them), its verdict, what was found, and
// for warn/fail what to do about it.
struct DoctorCheck {
  std::string name;
  CheckStatus status = CheckStatus::ok;
  std::string detail;
  std::string fix;
};

struct DoctorReport {
  std::string host; // where rv connected ("local" or "ssh user@host:port")
  std::vector<DoctorCheck> checks;
  int exit_code = 0; // 0: nothing failed; 252-255: the connection's; 1: another check failed
};

// ---- pure evaluations ----

// ssh.reach, ssh.host_key, ssh.auth from the first round trip's error (nullopt: it worked).
// `ssh` false: rv runs the Slurm commands locally, and the three are skipped.
std::vector<DoctorCheck> connection_checks(bool ssh, const std::string& where, const std::optional<Error>& error);

// The login node's answer to login_script(), cut at its `@@section` lines.
std::map<std::string, std::string> split_sections(std::string_view out);

// What the login checks need besides the login node's answer.
struct LoginContext {
  std::string transport = "auto"; // sync_transport: rsync missing fails only when it is "rsync"
  bool quota_configured = false;  // the profile has quota_command
};

// slurm.commands, slurm.version, slurm.associations, workspace.writable, workspace.quota,
// login.python3, login.rsync, from the sections of login_script()'s answer.
std::vector<DoctorCheck> login_checks(const std::map<std::string, std::string>& sections, const LoginContext& ctx);

// The accounts of the user's associations (sacctmgr -n -P ...: cluster|account|partition|qos|
// defaultqos), and the partitions they are limited to (empty: every partition).
struct Associations {
  std::vector<std::string> accounts;
  std::vector<std::string> partitions;
  std::vector<std::string> qos;
};
Associations parse_associations(std::string_view sacctmgr_out);

// slurm.partitions: the partitions with GPUs that are UP and open to the user's accounts; with
// `wanted` (doctor -p), that one must be among them, --quick or not (ux-review-3 N13: a -p no
// partition has was silently unused).
DoctorCheck partitions_check(const model::Cluster& cluster, const Associations& assoc, const std::string& wanted = {});
// `containers`: the runtimes discovery found on the login node (slurm/containers.hpp), for --container.
DoctorCheck containers_check(const model::ContainerSupport& offered);
// The partitions partitions_check() accepts, with a free GPU first (cheapest GPU weight first).
std::vector<std::string> usable_gpu_partitions(const model::Cluster& cluster, const Associations& assoc);

// job.start, job.gpu, job.devices, job.container from the test job's srun exit status and output.
std::vector<DoctorCheck> job_checks(int srun_status, std::string_view out, std::string_view err,
                                    const std::string& partition, bool image_given);

// What to do about a preflight failure reason (the job-side check's `reason=`).
std::string preflight_fix(std::string_view reason);

// ---- the round trips ----

// The login node's part, one shell script: $1 the remote root, $2 the quota command ("" = none).
std::string login_script();
// The test job's script: the preflight's node check, then what the job sees, as key=value lines;
// with `image`, GPUs visible inside a container of it (`--nv`).
std::string job_script(const std::string& site_check, bool required, const std::string& image);

struct DoctorOptions {
  bool quick = false;          // no test job
  std::string partition;       // the test job's partition ("" = the cheapest with a free GPU)
  std::string container_image; // an image for the container check ("" = the profile's, or none)
};

// Runs the checks in order; a failed connection skips the rest.
Result<DoctorReport> run_doctor(Env& env, const DoctorOptions& options);

nlohmann::json to_json(const DoctorReport& report);
// The report for a terminal: one line per check, the fix below a warn or fail.
std::string doctor_text(const DoctorReport& report);

} // namespace rv::app
