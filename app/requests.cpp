#include "app/requests.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/enum_names.hpp"

#include <cstdlib>

namespace rv::app {

const JobRecord* RequestRecord::winner_job() const
{
  for (const auto& j : jobs) {
    if (!winner.empty() && j.strategy_id == winner) {
      return &j;
    }
  }
  return nullptr;
}

std::vector<std::string> RequestRecord::job_ids() const
{
  std::vector<std::string> ids;
  for (const auto& j : jobs) {
    if (!j.job_id.empty()) {
      ids.push_back(j.job_id);
    }
  }
  return ids;
}

nlohmann::json to_json(const RequestRecord& r)
{
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& j : r.jobs) {
    jobs.push_back({{"strategy_id", j.strategy_id},
                    {"label", j.label},
                    {"partition", j.partition},
                    {"gpu_type", j.gpu_type},
                    {"nodes", j.nodes},
                    {"job_id", j.job_id},
                    {"error", j.error},
                    {"state", j.state},
                    {"reason", j.reason},
                    {"node_list", j.node_list},
                    {"earlier_segments", j.earlier_segments},
                    {"start_estimate", j.start_estimate},
                    {"elapsed_s", j.elapsed_s}});
  }
  nlohmann::json out = {{"id", r.id},
                        {"created_at", r.created_at},
                        {"host", r.host},
                        {"name", r.name},
                        {"kind", r.kind},
                        {"command", r.command},
                        {"workdir", r.workdir},
                        {"remote_root", r.remote_root},
                        {"log_dir", r.log_dir},
                        {"state", to_string(r.state)},
                        {"winner", r.winner},
                        {"jobs", jobs},
                        {"plan", r.plan},
                        {"secrets", r.secrets},
                        {"secrets_file", r.secrets_file},
                        {"sync", r.sync}};
  if (!r.refanout.is_null()) {
    out["refanout"] = r.refanout; // optional: records without it read as before
  }
  return out;
}

Result<RequestRecord> request_from_json(const nlohmann::json& j)
{
  try {
    RequestRecord r;
    r.id = j.at("id").get<std::string>();
    r.created_at = j.value("created_at", "");
    r.host = j.value("host", "");
    r.name = j.value("name", "");
    r.kind = j.value("kind", "run");
    r.command = j.value("command", "");
    r.workdir = j.value("workdir", "");
    r.remote_root = j.value("remote_root", "");
    r.log_dir = j.value("log_dir", "");
    const auto state = j.value("state", "submitting");
    auto parsed = parse_request_state(state);
    if (!parsed) {
      return fail(ErrorCode::parse, fmt::format("malformed request record: unknown state '{}'", state));
    }
    r.state = *parsed;
    r.winner = j.value("winner", "");
    r.plan = j.value("plan", nlohmann::json::object());
    r.sync = j.value("sync", nlohmann::json());
    r.refanout = j.value("refanout", nlohmann::json());
    r.secrets = j.value("secrets", std::vector<std::string>{});
    r.secrets_file = j.value("secrets_file", "");
    for (const auto& jj : j.value("jobs", nlohmann::json::array())) {
      JobRecord job;
      job.strategy_id = jj.value("strategy_id", "");
      job.label = jj.value("label", "");
      job.partition = jj.value("partition", "");
      job.gpu_type = jj.value("gpu_type", "");
      job.nodes = jj.value("nodes", 1);
      job.job_id = jj.value("job_id", "");
      job.error = jj.value("error", "");
      job.state = jj.value("state", "");
      job.reason = jj.value("reason", "");
      job.node_list = jj.value("node_list", "");
      job.earlier_segments = jj.value("earlier_segments", std::vector<std::string>{});
      job.start_estimate = jj.value("start_estimate", "");
      job.elapsed_s = jj.value("elapsed_s", std::int64_t{0});
      r.jobs.push_back(std::move(job));
    }
    r.base = to_json(r);
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::parse, fmt::format("malformed request record: {}", e.what()));
  }
}

Result<RequestRecord> find_request(const store::RecordStore& store, const std::string& key)
{
  RV_TRY(all, store.list());
  std::vector<RequestRecord> matches;
  for (const auto& j : all) {
    auto r = request_from_json(j);
    if (!r) {
      continue;
    }
    bool hit = r->id.starts_with(key) || r->name == key;
    for (const auto& job : r->jobs) {
      hit = hit || (!job.job_id.empty() && job.job_id == key);
    }
    if (hit) {
      matches.push_back(std::move(*r));
    }
  }
  if (matches.empty()) {
    return fail(ErrorCode::usage, fmt::format("no request matches '{}'", key), "`rv ps -a` lists requests");
  }
  if (matches.size() > 1) {
    std::string ids;
    for (const auto& m : matches) {
      ids += (ids.empty() ? "" : ", ") + m.id;
    }
    return fail(ErrorCode::usage, fmt::format("'{}' matches several requests: {}", key, ids), "give more of the id");
  }
  return matches.front();
}

std::string log_path(const RequestRecord& r, const JobRecord& job, bool err)
{
  return fmt::format("{}/{}-{}.{}", r.log_dir, r.name, job.job_id, err ? "err" : "out");
}

void apply_view(JobRecord& job, const slurm::JobView& view)
{
  job.state = slurm::to_string(view.state);
  job.reason = view.reason;
  if (!view.nodes.empty()) {
    job.node_list = view.nodes;
  }
  job.start_estimate = view.start_estimate;
  job.elapsed_s = view.elapsed_s;
}

void record_next_segment(store::RecordStore& store, RequestRecord& r, const std::string& prev, const std::string& next)
{
  for (auto& j : r.jobs) {
    if (j.job_id == prev) {
      j.earlier_segments.push_back(prev);
      j.job_id = next;
      j.state = "PENDING";
      j.node_list.clear();
    }
  }
  save(store, r);
}

void save(store::RecordStore& store, RequestRecord& r)
{
  auto mine = to_json(r);
  auto written =
      r.base.is_null() ? store.update(r.id, [&](nlohmann::json& rec) { rec = mine; }) : store.merge(r.id, r.base, mine);
  if (!written) {
    spdlog::warn("cannot update request record {}: {}", r.id, written.error().message);
    return;
  }
  if (*written != mine) { // a concurrent rv changed other fields: take them in
    if (auto merged = request_from_json(*written)) {
      merged->base = *written;
      r = std::move(*merged);
      return;
    }
  }
  r.base = std::move(mine);
}

namespace {
constexpr EnumNames<RequestState, 6> k_state_names({{
    {RequestState::submitting, "submitting"},
    {RequestState::submitted, "submitted"},
    {RequestState::won, "won"},
    {RequestState::done, "done"},
    {RequestState::failed, "failed"},
    {RequestState::cancelled, "cancelled"},
}});
} // namespace

std::string_view to_string(RequestState s)
{
  return k_state_names.name(s);
}

std::optional<RequestState> parse_request_state(std::string_view s)
{
  return k_state_names.parse(s);
}

RequestState ended_state(const std::string& job_state)
{
  if (job_state == "COMPLETED") {
    return RequestState::done;
  }
  if (job_state.starts_with("CANCELLED")) {
    return RequestState::cancelled;
  }
  return RequestState::failed;
}

bool is_final_state(RequestState state)
{
  return state == RequestState::done || state == RequestState::failed || state == RequestState::cancelled;
}

} // namespace rv::app
