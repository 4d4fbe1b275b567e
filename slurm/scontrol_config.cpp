#include "slurm/scontrol.hpp"

#include "core/duration.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

namespace rv::slurm {
namespace {

std::int64_t int_or(const std::map<std::string, std::string>& m, const std::string& key, std::int64_t dflt)
{
  auto it = m.find(key);
  return it == m.end() ? dflt : text::to_int(it->second).value_or(dflt);
}

} // namespace

Result<model::SchedulerConfig> parse_scontrol_config(std::string_view input)
{
  model::SchedulerConfig c;
  for (auto line : text::lines(input)) {
    auto eq = line.find(" = ");
    if (eq == std::string_view::npos) {
      continue; // section titles, "Configuration data as of ...", blank lines
    }
    auto key = std::string(text::trim(line.substr(0, eq)));
    auto value = std::string(text::trim(line.substr(eq + 3)));
    if (!key.empty() && key.find(' ') == std::string::npos) {
      c.raw.try_emplace(key, value); // later plugin sections may reuse a name: keep the first
    }
  }
  if (c.raw.empty()) {
    return fail(ErrorCode::parse, "no 'Key = value' lines in scontrol show config output");
  }
  auto get = [&](const char* key) -> std::string {
    auto it = c.raw.find(key);
    return it == c.raw.end() || text::is_null(it->second) ? std::string{} : it->second;
  };
  c.slurm_version = get("SLURM_VERSION");
  c.cluster_name = get("ClusterName");
  c.controller = get("SlurmctldHost[0]");
  if (c.controller.empty()) {
    c.controller = get("ControlMachine");
  }
  c.scheduler_type = get("SchedulerType");
  c.priority_type = get("PriorityType");
  c.first_come = c.priority_type == "priority/basic";
  c.select_type_parameters = get("SelectTypeParameters");
  c.priority_flags = get("PriorityFlags");
  for (const auto& flag : text::comma_list(c.priority_flags)) {
    c.max_tres = c.max_tres || flag == "MAX_TRES";
    c.max_tres_gres = c.max_tres_gres || flag == "MAX_TRES_GRES";
  }
  c.def_mem_per_cpu_mb = text::to_int(get("DefMemPerCPU")).value_or(0);
  c.max_job_count = text::to_int32(get("MaxJobCount")).value_or(0);
  c.requeue_allowed = get("JobRequeue") != "0";
  std::map<std::string, std::string> sched;
  for (const auto& item : text::comma_list(get("SchedulerParameters"))) {
    auto eq = item.find('=');
    sched[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
  }
  c.bf_interval_s = int_or(sched, "bf_interval", c.bf_interval_s);
  c.bf_resolution_s = int_or(sched, "bf_resolution", c.bf_resolution_s);
  c.bf_window_min = int_or(sched, "bf_window", c.bf_window_min);
  c.bf_min_age_reserve_s = int_or(sched, "bf_min_age_reserve", c.bf_min_age_reserve_s);
  c.bf_continue = sched.contains("bf_continue");
  c.bf_max_job_user = static_cast<int>(int_or(sched, "bf_max_job_user", c.bf_max_job_user));
  c.bf_max_job_test = static_cast<int>(int_or(sched, "bf_max_job_test", c.bf_max_job_test));
  return c;
}

} // namespace rv::slurm
