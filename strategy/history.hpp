#pragma once
// Predictions that learn: how far the planner's wait estimates were off on each partition, from
// the user's own past requests, and the correction of the estimates when a partition's are
// systematically off. Pure: the samples come in as data (app/run/plan/predictions.hpp reads the request
// records), the correction and its reasons go out as data.

#include "core/model/plan.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::strategy {

// One strategy of a past request: the wait the plan predicted, and the wait it got.
struct WaitSample {
  std::string partition;
  std::int64_t predicted_s = 0;        // the plan's est_wait_s
  std::int64_t actual_s = 0;           // submitted -> started; censored: submitted -> cancelled while pending
  bool censored = false;               // it never started (cancelled while pending): actual_s is a lower bound
  std::optional<std::int64_t> slurm_s; // Slurm's estimate at submission as a wait (squeue --start); none = unknown
  std::string model;                   // the estimator that predicted it (model::Strategy::wait_model)
};

// When a partition's bias counts as systematic.
struct HistoryPolicy {
  int min_samples = 5;          // informative samples on the partition
  std::int64_t min_bias_s = 60; // |median error| at least this
  double min_agreement = 0.8;   // this share of the samples is off in the median's direction
};

// What the history says about one partition. error = actual - predicted: > 0 started later than
// predicted. A censored sample counts only when it already waited longer than predicted (its
// error is at least actual - predicted); one cancelled sooner says nothing and is left out.
struct PartitionBias {
  std::string partition;
  std::string model; // the estimator whose samples these are ("" = every sample: `rv stats`)
  int started = 0;   // samples that started
  int censored = 0;  // informative censored samples
  std::int64_t median_error_s = 0;
  std::int64_t median_abs_error_s = 0;
  double agreement = 0;    // share of samples off in the direction of the median
  bool systematic = false; // qualifies for a correction (HistoryPolicy)
  std::string why;         // one line: why it does or does not qualify
};

// The bias of every partition with samples, by partition name.
std::vector<PartitionBias> partition_biases(const std::vector<WaitSample>& samples, const HistoryPolicy& policy = {});

// The biases the planner corrects with: per estimator and partition, each from that estimator's
// own samples (an estimator's history says nothing about another's errors: a new version of rv's
// replays starts a history of its own). Samples that name no estimator (records older than the
// field) correct nothing.
std::vector<PartitionBias> estimator_biases(const std::vector<WaitSample>& samples, const HistoryPolicy& policy = {});

// rv's and Slurm's wait estimates against what happened, on one partition (`rv stats`).
struct EstimateErrors {
  std::string partition;
  int rv_samples = 0; // the samples that inform rv's error
  std::int64_t rv_median_abs_s = 0;
  int slurm_samples = 0; // ... Slurm's (those with a Slurm estimate)
  std::int64_t slurm_median_abs_s = 0;
  int paired = 0; // the samples that inform both: the fair comparison
  std::int64_t rv_paired_median_abs_s = 0;
  std::int64_t slurm_paired_median_abs_s = 0;
};

// The median absolute error of rv's and of Slurm's estimates per partition, over the samples that
// inform each, and of both over the samples that inform both. A job that started gives |actual -
// estimate|; one cancelled while pending informs an estimate only once it waited past it, and its
// error is then at least actual - estimate, which is taken as its error (a lower bound, so a
// censored sample never makes an estimate look worse than it is).
std::vector<EstimateErrors> estimate_errors(const std::vector<WaitSample>& samples);

// Corrects the known est_wait_s of every strategy on a partition with a systematic bias of its
// own estimator (PartitionBias::model == Strategy::wait_model; the median error added, never below 0); each corrected strategy gets a reason, and `notes` one line
// per partition corrected. Biases that are not systematic change nothing.
void correct_estimates(std::vector<model::Strategy>& strategies, const std::vector<PartitionBias>& biases,
                       std::vector<std::string>& notes);

} // namespace rv::strategy
