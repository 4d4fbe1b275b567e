#include "slurm/scontrol.hpp"

#include "core/checked.hpp"
#include "core/duration.hpp"
#include "slurm/gres.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <limits>

namespace rv::slurm {
namespace {

Result<std::optional<ClusterTime>> time_of(const Record& r, std::string_view key)
{
  auto v = r.value(key);
  auto t = parse_cluster_time(v);
  if (!t) {
    return fail(ErrorCode::parse, fmt::format("job {}: {}", r.value("JobId"), t.error().message), t.error().hint);
  }
  return t;
}

Result<std::int64_t> duration_of(const Record& r, std::string_view key)
{
  auto v = r.value(key);
  if (v.empty() || v == "NONE" || v == "UNLIMITED" || v == "Partition_Limit") {
    return -1;
  }
  auto d = parse_slurm_time(v);
  if (!d) {
    return fail(ErrorCode::parse, fmt::format("job {}: bad {}='{}'", r.value("JobId"), key, v));
  }
  return *d;
}

} // namespace

Result<std::vector<JobInfo>> parse_scontrol_jobs(std::string_view text)
{
  RV_TRY(records, parse_records(text));
  std::vector<JobInfo> out;
  for (auto& r : records) {
    if (r.get("JobId") == nullptr) {
      continue;
    }
    JobInfo j;
    j.job_id = r.value("JobId");
    j.name = r.value("JobName");
    j.state = r.value("JobState");
    j.reason = r.value("Reason");
    if (j.reason == "None") {
      j.reason.clear();
    }
    j.partition = r.value("Partition");
    j.nodes = r.value("NodeList"); // exact key: never ReqNodeList/ExcNodeList
    j.batch_host = r.value("BatchHost");
    j.priority = text::to_int(r.value("Priority")).value_or(-1);
    j.sched_nodes = r.value("SchedNodeList");
    j.dependency = r.value("Dependency");
    auto exit = r.value("ExitCode");
    auto colon = exit.find(':');
    j.exit_status = text::to_int32(exit.substr(0, colon)).value_or(0);
    j.exit_signal = colon == std::string::npos ? 0 : text::to_int32(exit.substr(colon + 1)).value_or(0);
    RV_TRY(submit, time_of(r, "SubmitTime"));
    j.submit_time = submit;
    RV_TRY(start, time_of(r, "StartTime"));
    j.start_time = start;
    RV_TRY(end, time_of(r, "EndTime"));
    j.end_time = end;
    RV_TRY(limit, duration_of(r, "TimeLimit"));
    j.time_limit_s = limit;
    RV_TRY(tmin, duration_of(r, "TimeMin"));
    j.time_min_s = tmin;
    RV_TRY(run, duration_of(r, "RunTime"));
    j.run_time_s = run < 0 ? 0 : run;
    // 22.05 prints TRES= (allocated, or requested while pending); 23.02+ print ReqTRES= and
    // AllocTRES= instead, AllocTRES=(null) while pending (docs/slurm-quirks.md).
    j.tres = r.value("TRES");
    if (j.tres.empty()) {
      const auto alloc = r.value("AllocTRES");
      j.tres = text::is_null(alloc) ? r.value("ReqTRES") : alloc;
    }
    RV_TRY(gpus, parse_tres_gpus(j.tres));
    if (gpus.empty()) {
      // TRES lacks gres/gpu when accounting does not track it: fall back to per-node GRES.
      auto per_node = r.value("TresPerNode");
      RV_TRY(pn, parse_tres_gpus(per_node));
      auto n_nodes =
          std::max(1, text::to_int32(r.value("NumNodes").substr(0, r.value("NumNodes").find('-'))).value_or(1));
      if (!checked_mul(total_gpus(pn), n_nodes)) { // then no single count overflows either
        return fail(ErrorCode::parse, fmt::format("job {}: {} GPUs per node on {} nodes is more than {}", j.job_id,
                                                  total_gpus(pn), n_nodes, std::numeric_limits<int>::max()));
      }
      for (auto& g : pn) {
        g.count *= n_nodes;
      }
      gpus = std::move(pn);
    }
    j.gpus = std::move(gpus);
    j.raw = std::move(r);
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace rv::slurm
