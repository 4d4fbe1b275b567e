#include "app/request/requests.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/container.hpp"
#include "core/enum_names.hpp"
#include "core/utc_time.hpp"
#include "slurm/job_state.hpp"
#include "slurm/text.hpp"

#include <algorithm>
#include <cstdlib>

namespace rv::app {
namespace {

std::string iso_or_empty(std::int64_t epoch)
{
  return epoch > 0 ? utc_iso(epoch) : std::string();
}

} // namespace

std::string RequestRecord::cluster_label() const
{
  if (!cluster.empty()) {
    return cluster;
  }
  if (!destination.empty()) {
    return destination;
  }
  return host.starts_with("ssh ") ? host.substr(4) : host;
}

const JobRecord* RequestRecord::winner_job() const
{
  for (const auto& j : jobs) {
    if (!winner.empty() && j.strategy_id == winner) {
      return &j;
    }
  }
  return nullptr;
}

const JobRecord* RequestRecord::job_that_ran() const
{
  const JobRecord* found = nullptr;
  for (const auto& j : jobs) {
    const auto s = j.state;
    if (j.job_id.empty() || s == slurm::JobState::cancelled || s == slurm::JobState::pending ||
        s == slurm::JobState::unknown) {
      continue;
    }
    if (found == nullptr || j.started_at > found->started_at) {
      found = &j;
    }
  }
  return found;
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
    jobs.push_back(
        {{"predicted_wait_s", j.predicted_wait_s ? nlohmann::json(*j.predicted_wait_s) : nlohmann::json()},
         {"predicted_start",
          j.predicted_wait_s && j.submitted_at > 0 ? utc_iso(j.submitted_at + *j.predicted_wait_s) : std::string()},
         {"predicted_by", j.predicted_by},
         {"submitted_at", iso_or_empty(j.submitted_at)},
         {"started_at", iso_or_empty(j.started_at)},
         {"cancelled_pending_at", iso_or_empty(j.cancelled_pending_at)},
         {"slurm_estimate", j.slurm_estimate},
         {"slurm_estimate_at", iso_or_empty(j.slurm_estimate_at)},
         {"strategy_id", j.strategy_id},
         {"label", j.label},
         {"partition", j.partition},
         {"gpu_type", j.gpu_type},
         {"nodes", j.nodes},
         {"job_id", j.job_id},
         {"error", j.error},
         {"state", state_name(j)},
         {"reason", j.reason},
         {"node_list", j.node_list},
         {"earlier_segments", j.earlier_segments},
         {"start_estimate", j.start_estimate},
         {"elapsed_s", j.elapsed_s}});
  }
  nlohmann::json doc = {{"id", r.id},
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
  doc["options"] = r.options;
  if (!r.refanout.is_null()) {
    doc["refanout"] = r.refanout; // optional: records without it read as before
  }
  if (!r.pruned_at.empty()) {
    doc["pruned_at"] = r.pruned_at; // optional, as refanout
  }
  if (!r.study.is_null()) {
    doc["study"] = r.study; // optional, as refanout
  }
  if (r.utc_offset_s) {
    doc["utc_offset_s"] = *r.utc_offset_s; // optional, as refanout
  }
  if (!r.destination.empty()) {
    doc["destination"] = r.destination; // optional, as refanout
  }
  if (!r.cluster.empty()) {
    doc["cluster"] = r.cluster; // optional, as refanout
  }
  if (!r.race.is_null()) {
    doc["race"] = r.race; // optional, as refanout
  }
  if (!r.after.is_null()) {
    doc["after"] = r.after; // optional, as refanout
  }
  return doc;
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
    r.options = j.value("options", nlohmann::json());
    r.sync = j.value("sync", nlohmann::json());
    r.refanout = j.value("refanout", nlohmann::json());
    r.secrets = j.value("secrets", std::vector<std::string>{});
    r.secrets_file = j.value("secrets_file", "");
    r.pruned_at = j.value("pruned_at", "");
    if (auto o = j.find("utc_offset_s"); o != j.end() && o->is_number_integer()) {
      r.utc_offset_s = o->get<std::int64_t>();
    }
    r.destination = j.value("destination", "");
    r.cluster = j.value("cluster", "");
    r.race = j.value("race", nlohmann::json());
    r.after = j.value("after", nlohmann::json());
    r.study = j.value("study", nlohmann::json());
    for (const auto& jj : j.value("jobs", nlohmann::json::array())) {
      JobRecord job;
      job.strategy_id = jj.value("strategy_id", "");
      job.label = jj.value("label", "");
      job.partition = jj.value("partition", "");
      job.gpu_type = jj.value("gpu_type", "");
      job.nodes = jj.value("nodes", 1);
      job.job_id = jj.value("job_id", "");
      job.error = jj.value("error", "");
      job.state = slurm::parse_job_state(jj.value("state", "")); // REFUSED, "": unknown
      job.reason = jj.value("reason", "");
      job.node_list = jj.value("node_list", "");
      job.earlier_segments = jj.value("earlier_segments", std::vector<std::string>{});
      job.start_estimate = jj.value("start_estimate", "");
      job.elapsed_s = jj.value("elapsed_s", std::int64_t{0});
      // Schema 2 (absent from older records: nothing predicted, nothing known).
      if (auto p = jj.find("predicted_wait_s"); p != jj.end() && p->is_number_integer()) {
        job.predicted_wait_s = p->get<std::int64_t>();
      }
      job.predicted_by = jj.value("predicted_by", ""); // absent before session 13: not recorded
      job.submitted_at = parse_utc_iso(jj.value("submitted_at", "")).value_or(0);
      job.started_at = parse_utc_iso(jj.value("started_at", "")).value_or(0);
      job.cancelled_pending_at = parse_utc_iso(jj.value("cancelled_pending_at", "")).value_or(0);
      job.slurm_estimate = jj.value("slurm_estimate", "");
      job.slurm_estimate_at = parse_utc_iso(jj.value("slurm_estimate_at", "")).value_or(0);
      r.jobs.push_back(std::move(job));
    }
    r.base = to_json(r);
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::parse, fmt::format("malformed request record: {}", e.what()));
  }
}

namespace {

// --container as the record keeps it: the image and each mount as typed (SRC:DST[:ro]); null = none.
nlohmann::json container_record_json(const std::optional<model::ContainerOrder>& c)
{
  if (!c) {
    return nullptr;
  }
  auto mounts = nlohmann::json::array();
  for (const auto& m : c->mounts) {
    mounts.push_back(m.src + ":" + m.dst + (m.read_only ? ":ro" : ""));
  }
  return {{"image", c->image.text}, {"mounts", mounts}};
}

// The record's container, read back by the one grammar; nullopt when absent or no longer valid.
std::optional<model::ContainerOrder> container_from_record(const nlohmann::json& j)
{
  if (!j.is_object() || !j.value("image", nlohmann::json()).is_string()) {
    return std::nullopt;
  }
  auto image = parse_container_image(j["image"].get<std::string>());
  if (!image) {
    return std::nullopt;
  }
  model::ContainerOrder c{*image, {}};
  for (const auto& m : j.value("mounts", std::vector<std::string>{})) {
    auto mount = parse_container_mount(m);
    if (!mount) {
      return std::nullopt;
    }
    c.mounts.push_back(*mount);
  }
  return c;
}

} // namespace

nlohmann::json request_options_json(const model::JobRequest& r)
{
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"gpus", r.gpus},
          {"gpu_type", opt(r.gpu_type)},
          {"time_s", r.time_s},
          {"mem_mb", opt(r.mem_mb)},
          {"cpus", opt(r.cpus_per_task)},
          {"min_vram_gb", opt(r.min_vram_gb)},
          {"single_node", r.single_node},
          {"nodes", opt(r.nodes)},
          {"mig", r.allow_mig},
          {"time_min", r.allow_time_min},
          {"checkpoint", r.allow_checkpoint},
          {"account", r.account},
          {"qos", r.qos},
          {"exclude", r.exclude_nodes},
          {"job_name", r.job_name},
          {"container", container_record_json(r.container)}};
}

std::optional<model::JobRequest> request_options_from_json(const nlohmann::json& o)
{
  if (!o.is_object() || !o.contains("gpus") || !o["gpus"].is_number_integer() || !o.contains("time_s") ||
      !o["time_s"].is_number_integer()) {
    return std::nullopt;
  }
  try {
    model::JobRequest r;
    r.gpus = o["gpus"].get<int>();
    r.time_s = o["time_s"].get<std::int64_t>();
    if (o.value("gpu_type", nlohmann::json()).is_string()) {
      r.gpu_type = o["gpu_type"].get<std::string>();
    }
    if (o.value("mem_mb", nlohmann::json()).is_number_integer()) {
      r.mem_mb = o["mem_mb"].get<std::int64_t>();
    }
    if (o.value("cpus", nlohmann::json()).is_number_integer()) {
      r.cpus_per_task = o["cpus"].get<int>();
    }
    if (o.value("min_vram_gb", nlohmann::json()).is_number_integer()) {
      r.min_vram_gb = o["min_vram_gb"].get<int>();
    }
    r.single_node = o.value("single_node", false);
    if (o.value("nodes", nlohmann::json()).is_number_integer()) {
      r.nodes = o["nodes"].get<int>();
    }
    r.allow_mig = o.value("mig", false);
    r.allow_time_min = o.value("time_min", false);
    r.allow_checkpoint = o.value("checkpoint", false);
    r.account = o.value("account", "");
    r.qos = o.value("qos", "");
    r.exclude_nodes = o.value("exclude", std::vector<std::string>{});
    r.job_name = o.value("job_name", "");
    r.container = container_from_record(o.value("container", nlohmann::json()));
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt; // a field of the wrong type: re-plan from the plan instead
  }
}

void sort_newest_first(std::vector<RequestRecord>& requests)
{
  auto last_job = [](const RequestRecord& r) {
    std::int64_t most = -1;
    for (const auto& j : r.jobs) {
      most = std::max<std::int64_t>(most, slurm::text::to_int(j.job_id).value_or(-1));
    }
    return most;
  };
  std::stable_sort(requests.begin(), requests.end(), [&](const RequestRecord& a, const RequestRecord& b) {
    return a.created_at != b.created_at ? a.created_at > b.created_at : last_job(a) > last_job(b);
  });
}

std::string log_path(const RequestRecord& r, const JobRecord& job, bool err)
{
  return fmt::format("{}/{}-{}.{}", r.log_dir, r.name, job.job_id, err ? "err" : "out");
}

std::string state_name(const JobRecord& job)
{
  if (job.state != slurm::JobState::unknown) {
    return slurm::to_string(job.state);
  }
  if (job.job_id.empty()) {
    return job.error.empty() ? "" : "REFUSED";
  }
  return slurm::to_string(job.state); // Slurm named a state rv does not know
}

void apply_view(JobRecord& job, const slurm::JobView& view)
{
  job.state = view.state;
  job.reason = view.reason;
  if (!view.nodes.empty()) {
    job.node_list = view.nodes;
  }
  job.start_estimate = view.start_estimate;
  if (job.slurm_estimate.empty() && view.state == slurm::JobState::pending && !view.start_estimate.empty() &&
      view.seen_epoch > 0) {
    job.slurm_estimate = view.start_estimate; // the first one: Slurm's estimate at submission
    job.slurm_estimate_at = view.seen_epoch;
  }
  job.elapsed_s = view.elapsed_s;
  // Started: a poll saw it run (or end after running). A job cancelled while pending has no run
  // time, but sacct gives it a Start (the cancel time): never a start.
  const bool ran = slurm::is_started(view.state) || view.elapsed_s > 0 ||
                   (!view.nodes.empty() && view.state == slurm::JobState::failed);
  if (job.started_at == 0 && job.cancelled_pending_at == 0 && view.start_epoch > 0 && ran) {
    job.started_at = view.start_epoch;
  }
}

void apply_polled(JobRecord& job, const slurm::JobView& view, std::int64_t now)
{
  const auto before = job.state;
  apply_view(job, view);
  if (job.state == slurm::JobState::cancelled && job.started_at == 0) { // cancelled while pending, seen now
    job.state = before;
    mark_cancelled(job, now);
  }
}

void mark_cancelled(JobRecord& job, std::int64_t now)
{
  const bool pending = job.state == slurm::JobState::unknown || job.state == slurm::JobState::pending;
  if (pending && job.started_at == 0 && job.cancelled_pending_at == 0 && !job.job_id.empty()) {
    job.cancelled_pending_at = now;
  }
  job.state = slurm::JobState::cancelled;
}

void record_next_segment(store::RecordStore& store, RequestRecord& r, const std::string& prev, const std::string& next)
{
  for (auto& j : r.jobs) {
    if (j.job_id == prev) {
      j.earlier_segments.push_back(prev);
      j.job_id = next;
      j.state = slurm::JobState::pending;
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
      // base stays to_json's (request_from_json sets it): members rv run --in keeps beside the
      // struct's ("steps") are then never seen as removed by the next save.
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

RequestState ended_state(slurm::JobState job_state)
{
  if (job_state == slurm::JobState::completed) {
    return RequestState::done;
  }
  if (job_state == slurm::JobState::cancelled) {
    return RequestState::cancelled;
  }
  return RequestState::failed;
}

bool is_final_state(RequestState state)
{
  return state == RequestState::done || state == RequestState::failed || state == RequestState::cancelled;
}

std::filesystem::path settle_log_path(const store::RecordStore& store, const std::string& id)
{
  return store.dir() / (id + ".settle.log");
}

std::filesystem::path tending_lock_path(const store::RecordStore& store, const std::string& id)
{
  return store.dir() / ("." + id + ".tending");
}

} // namespace rv::app
