// The prediction history in request records (schema 2), and `rv stats`' numbers.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/run/plan/predictions.hpp"
#include "core/utc_time.hpp"

#include <doctest/doctest.h>

#include <ctime>

using namespace rv;
using namespace rv::app;

namespace {

constexpr std::int64_t k_now = 1'800'000'000;

JobRecord job(const std::string& part, std::optional<std::int64_t> predicted, std::int64_t submitted,
              std::int64_t started, std::int64_t cancelled)
{
  JobRecord j;
  j.strategy_id = "s1";
  j.partition = part;
  j.job_id = "1";
  j.predicted_wait_s = predicted;
  j.predicted_by = "plan";
  j.submitted_at = submitted;
  j.started_at = started;
  j.cancelled_pending_at = cancelled;
  return j;
}

RequestRecord request(std::int64_t created, std::vector<JobRecord> jobs, std::string host = "ssh a@b:22")
{
  RequestRecord r;
  r.id = "0000abcd";
  r.created_at = utc_iso(created);
  r.host = std::move(host);
  r.jobs = std::move(jobs);
  return r;
}

} // namespace

TEST_CASE("request records: the prediction history round-trips, schema 1 records still load")
{
  auto r = request(k_now, {job("gpu-a100", 480, k_now, k_now + 2, 0), job("gpu-v100", std::nullopt, k_now, 0, 0)});
  auto j = to_json(r);
  CHECK(j["jobs"][0]["predicted_wait_s"] == 480);
  CHECK(j["jobs"][0]["predicted_start"] == utc_iso(k_now + 480));
  CHECK(j["jobs"][0]["submitted_at"] == utc_iso(k_now));
  CHECK(j["jobs"][0]["started_at"] == utc_iso(k_now + 2));
  CHECK(j["jobs"][0]["cancelled_pending_at"] == "");
  CHECK(j["jobs"][1]["predicted_wait_s"].is_null());
  auto back = request_from_json(j);
  REQUIRE(back);
  CHECK(back->jobs[0].predicted_wait_s == 480);
  CHECK(j["jobs"][0]["predicted_by"] == "plan");
  CHECK(back->jobs[0].predicted_by == "plan");
  CHECK(back->jobs[0].submitted_at == k_now);
  CHECK(back->jobs[0].started_at == k_now + 2);
  CHECK_FALSE(back->jobs[1].predicted_wait_s);

  // A schema 1 record (before predictions): loads, with nothing predicted and nothing known.
  auto old = nlohmann::json::parse(R"({"id": "1234abcd", "schema": 1, "created_at": "2026-11-22T05:37:42Z",
    "state": "done", "jobs": [{"strategy_id": "s1", "job_id": "7", "state": "COMPLETED"}]})");
  auto loaded = request_from_json(old);
  REQUIRE(loaded);
  CHECK_FALSE(loaded->jobs[0].predicted_wait_s);
  CHECK(loaded->jobs[0].predicted_by.empty());
  CHECK(loaded->jobs[0].started_at == 0);
  CHECK(loaded->created_at == "2026-11-22T05:37:42Z");
}

TEST_CASE("mark_cancelled: a pending job's cancellation is recorded, a running one's is not")
{
  auto pending = job("p", 0, k_now, 0, 0);
  pending.state = slurm::JobState::pending;
  mark_cancelled(pending, k_now + 30);
  CHECK(pending.state == slurm::JobState::cancelled);
  CHECK(pending.cancelled_pending_at == k_now + 30);
  auto running = job("p", 0, k_now, k_now + 1, 0);
  running.state = slurm::JobState::running;
  mark_cancelled(running, k_now + 30);
  CHECK(running.cancelled_pending_at == 0);
  slurm::JobView v;
  v.state = slurm::JobState::running;
  v.start_epoch = k_now + 5;
  v.elapsed_s = 3;
  auto seen = job("p", 0, k_now, 0, 0);
  apply_view(seen, v);
  CHECK(seen.started_at == k_now + 5);
}

TEST_CASE("rv stats: samples per host and partition within the window, medians as the records say")
{
  std::vector<RequestRecord> records;
  for (int i = 0; i < 5; ++i) { // a6000: predicted 8 min, started in 1-5 s
    records.push_back(request(k_now - 100 * i, {job("gpu-a6000", 480, k_now - 100 * i, k_now - 100 * i + 1 + i, 0),
                                                job("gpu-a100", 0, k_now - 100 * i, 0, k_now - 100 * i + 60)}));
  }
  records.push_back(request(k_now - 40 * 86400, {job("gpu-a6000", 0, k_now - 40 * 86400, k_now, 0)})); // too old
  records.push_back(request(k_now, {job("gpu-v100", 60, k_now, k_now + 660, 0)}, "local"));
  auto stats = prediction_stats(records, k_now, {});
  CHECK(stats["requests"] == 6);
  REQUIRE(stats["hosts"].size() == 2);
  CHECK(stats["hosts"][0]["host"] == "local");
  const auto& parts = stats["hosts"][1]["partitions"];
  REQUIRE(parts.size() == 2);
  CHECK(parts[0]["partition"] == "gpu-a100");
  CHECK(parts[0]["cancelled_pending"] == 5);
  CHECK(parts[0]["started"] == 0);
  CHECK(parts[0]["median_error_s"] == 60);
  CHECK(parts[1]["partition"] == "gpu-a6000");
  CHECK(parts[1]["started"] == 5);
  CHECK(parts[1]["median_error_s"] == 3 - 480); // waits 1..5 s: median 3 s
  CHECK(parts[1]["corrected"] == true);
  CHECK(parts[1]["why"].get<std::string>().starts_with("plan's estimates: 5 of 5"));
  // The same history in records that name no estimator (before session 13): shown, not corrected.
  auto unnamed = records;
  for (auto& r : unnamed) {
    for (auto& j : r.jobs) {
      j.predicted_by.clear();
    }
  }
  const auto old_stats = prediction_stats(unnamed, k_now, {});
  CHECK(old_stats["hosts"][1]["partitions"][1]["median_error_s"] == 3 - 480);
  CHECK(old_stats["hosts"][1]["partitions"][1]["corrected"] == false);
  CHECK(stats["hosts"][0]["partitions"][0]["median_error_s"] == 600);
  auto last2 = prediction_stats(records, k_now, {2, 30});
  CHECK(last2["requests"] == 2);
  CHECK(format_prediction_stats(stats).find("gpu-a6000") != std::string::npos);
  auto samples = wait_samples(records, {"", "local"}, k_now);
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].actual_s == 660);
}

TEST_CASE("rv stats and the planner's history: one cluster through several login nodes is one cluster (N9)")
{
  std::vector<RequestRecord> records;
  for (const char* login : {"ssh rvtest@127.0.0.1:2222", "ssh rvtest@127.0.0.1:2228", "ssh rvtest@127.0.0.1:2223"}) {
    records.push_back(request(k_now - 10, {job("gpu-v100", 60, k_now - 10, k_now, 0)}, login));
    records.back().cluster = "rvtest";
  }
  // An older record of the same login node, from before records named their cluster.
  records.push_back(request(k_now - 20, {job("gpu-v100", 60, k_now - 20, k_now, 0)}, "ssh rvtest@127.0.0.1:2222"));
  records.push_back(request(k_now - 5, {job("gpu-a100", 60, k_now - 5, k_now, 0)}, "ssh other@hpc:22"));
  records.back().cluster = "national";

  const auto stats = prediction_stats(records, k_now, {});
  REQUIRE(stats["hosts"].size() == 3); // national, rvtest, and the unnamed old record's login node
  CHECK(stats["hosts"][0]["host"] == "national");
  CHECK(stats["hosts"][1]["host"] == "rvtest");
  CHECK(stats["hosts"][1]["samples"] == 3);
  CHECK(stats["hosts"][1]["logins"].size() == 3);
  CHECK(stats["hosts"][2]["host"] == "ssh rvtest@127.0.0.1:2222");
  const auto text = format_prediction_stats(stats);
  CHECK(text.find("rvtest (3 samples, through ssh rvtest@127.0.0.1:2222, ssh rvtest@127.0.0.1:2223, ssh "
                  "rvtest@127.0.0.1:2228)") != std::string::npos);

  // Planning on rvtest through :2222 learns from every login's records and the old one of :2222.
  CHECK(wait_samples(records, {"rvtest", "ssh rvtest@127.0.0.1:2222"}, k_now).size() == 4);
  CHECK(wait_samples(records, {"rvtest", "ssh rvtest@127.0.0.1:2228"}, k_now).size() == 3);
  CHECK(wait_samples(records, {"national", "ssh other@hpc:22"}, k_now).size() == 1);
  CHECK(wait_samples(records, {}, k_now).size() == 5);
}

// #30 item 3: Slurm's first start estimate, seen by a poll while the job pended, against rv's.
TEST_CASE("apply_view keeps Slurm's first estimate, rv stats compares it with rv's, in the cluster's time zone")
{
  JobRecord j = job("gpu-a100", 60, k_now, 0, 0);
  slurm::JobView v;
  v.state = slurm::JobState::pending;
  v.start_estimate = "2027-01-15T10:05:00";
  v.seen_epoch = k_now + 3;
  apply_view(j, v);
  CHECK(j.slurm_estimate == "2027-01-15T10:05:00");
  CHECK(j.slurm_estimate_at == k_now + 3);
  v.start_estimate = "2027-01-15T10:01:00"; // a later, better one: not Slurm's estimate at submission
  v.seen_epoch = k_now + 40;
  apply_view(j, v);
  CHECK(j.slurm_estimate == "2027-01-15T10:05:00");
  CHECK(j.start_estimate == "2027-01-15T10:01:00"); // the current one, as before

  // A cluster at UTC+1 (its wall clock one hour ahead). Submitted at `sub`, started 2 min later.
  const std::int64_t sub = k_now;
  RequestRecord r = request(sub, {job("gpu-a100", 60, sub, sub + 120, 0)});
  r.utc_offset_s = 3600;
  auto& rj = r.jobs[0];
  const auto local = [&](std::int64_t epoch) { // cluster-local wall-clock text for an epoch
    auto t = epoch + 3600;
    std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return std::string(buf);
  };
  rj.slurm_estimate = local(sub + 300); // Slurm: in 5 min; rv: 1 min; it started after 2 min
  rj.slurm_estimate_at = sub + 3;
  auto back = request_from_json(to_json(r)); // the record keeps both
  REQUIRE(back);
  CHECK(back->utc_offset_s == 3600);
  CHECK(back->jobs[0].slurm_estimate_at == sub + 3);
  auto stats = prediction_stats({*back}, sub + 1000, {});
  const auto& p = stats["hosts"][0]["partitions"][0];
  CHECK(p["paired"] == 1);
  CHECK(p["rv_paired_median_abs_error_s"] == 60);
  CHECK(p["slurm_paired_median_abs_error_s"] == 180);
  CHECK(format_prediction_stats(stats).find("rv vs Slurm") != std::string::npos);
  // Seen too late after the submission: not Slurm's estimate at submission.
  back->jobs[0].slurm_estimate_at = sub + k_slurm_estimate_window_s + 1;
  CHECK(prediction_stats({*back}, sub + 1000, {})["hosts"][0]["partitions"][0]["paired"] == 0);
  // No offset recorded (an older record): no comparison rather than a wrong one.
  back->jobs[0].slurm_estimate_at = sub + 3;
  back->utc_offset_s.reset();
  CHECK(prediction_stats({*back}, sub + 1000, {})["hosts"][0]["partitions"][0]["slurm_samples"] == 0);
}
