#pragma once
// Predictions that learn: the prediction history of the user's recent requests (what each
// strategy's plan predicted, and when it started or was cancelled while pending), its median
// error per partition (`rv stats`), and the biases the planner corrects (strategy/history.hpp).

#include "app/request/requests.hpp"
#include "core/store/record_store.hpp"
#include "strategy/history.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rv::app {

// How soon after its submission a job's first Slurm start estimate must have been seen to count as
// Slurm's estimate at submission (`rv stats`' comparison; docs/requests.md, "Predictions").
inline constexpr std::int64_t k_slurm_estimate_window_s = 120;

// Which requests count: the newest `last`, of the last `days` days.
struct HistoryWindow {
  int last = 50;
  std::int64_t days = 30;
};

// Whose history: the requests of one cluster, named by its ClusterName (every login node and alias
// of it) or, for records older than the name, by the login node they were submitted on; both
// empty = every request.
struct HistoryScope {
  std::string cluster; // Slurm's ClusterName
  std::string host;    // runner.where()
  bool holds(const RequestRecord& r) const;
};

// The samples of `records` in `scope` within `window` of `now`: every job with a prediction that
// started (actual = started - submitted) or was cancelled while pending (censored: actual =
// cancelled - submitted, a lower bound).
std::vector<strategy::WaitSample> wait_samples(const std::vector<RequestRecord>& records, const HistoryScope& scope,
                                               std::int64_t now, const HistoryWindow& window = {});

// The biases of the scope's partitions per estimator from the store's records (unreadable records
// skipped): strategy::estimator_biases, what the planner corrects with.
std::vector<strategy::PartitionBias> history_biases(const store::RecordStore& store, const HistoryScope& scope,
                                                    std::int64_t now, const HistoryWindow& window = {});

// `rv stats`: per cluster (its name; a record without one: its login node), per partition, the
// samples and median errors (docs/requests.md, "Predictions"): {"window": {...}, "requests": N,
// "hosts": [{"host": the cluster as shown, "logins": [the login nodes], "partitions": [...]}]}.
nlohmann::json prediction_stats(const std::vector<RequestRecord>& records, std::int64_t now,
                                const HistoryWindow& window);

// The same as a table for people.
std::string format_prediction_stats(const nlohmann::json& stats);

} // namespace rv::app
