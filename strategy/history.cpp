#include "strategy/history.hpp"

#include "core/duration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

namespace rv::strategy {
namespace {

// The median of `v` (the lower middle for an even count: a real sample, in whole seconds).
std::int64_t median(std::vector<std::int64_t> v)
{
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[(v.size() - 1) / 2];
}

std::string signed_duration(std::int64_t s)
{
  return fmt::format("{}{}", s < 0 ? "-" : "+", s == 0 ? "0s" : format_human_duration(std::llabs(s)));
}

} // namespace

std::vector<PartitionBias> partition_biases(const std::vector<WaitSample>& samples, const HistoryPolicy& policy)
{
  std::map<std::string, std::vector<std::int64_t>> errors;
  std::map<std::string, PartitionBias> out;
  for (const auto& s : samples) {
    if (s.censored && s.actual_s <= s.predicted_s) {
      continue; // cancelled before the predicted start: no information (and no row of its own)
    }
    auto& b = out[s.partition];
    b.partition = s.partition;
    ++(s.censored ? b.censored : b.started);
    errors[s.partition].push_back(s.actual_s - s.predicted_s);
  }
  std::vector<PartitionBias> list;
  for (auto& [name, b] : out) {
    const auto& e = errors[name];
    std::vector<std::int64_t> abs;
    for (auto x : e) {
      abs.push_back(std::llabs(x));
    }
    b.median_error_s = median(e);
    b.median_abs_error_s = median(abs);
    const auto agree = std::count_if(e.begin(), e.end(), [&](std::int64_t x) {
      return b.median_error_s > 0 ? x > 0 : b.median_error_s < 0 ? x < 0 : x == 0;
    });
    b.agreement = e.empty() ? 0 : static_cast<double>(agree) / static_cast<double>(e.size());
    const int n = b.started + b.censored;
    if (n < policy.min_samples) {
      b.why = fmt::format("{} samples, fewer than {}", n, policy.min_samples);
    } else if (std::llabs(b.median_error_s) < policy.min_bias_s) {
      b.why = fmt::format("median error {} is within {} s", signed_duration(b.median_error_s), policy.min_bias_s);
    } else if (b.agreement < policy.min_agreement) {
      b.why = fmt::format("only {:.0f}% of {} samples are off the same way (needs {:.0f}%)", b.agreement * 100, n,
                          policy.min_agreement * 100);
    } else {
      b.systematic = true;
      b.why = fmt::format("{} of {} samples started {} than predicted, median {}", agree, n,
                          b.median_error_s > 0 ? "later" : "sooner", signed_duration(b.median_error_s));
    }
    list.push_back(std::move(b));
  }
  return list;
}

std::vector<PartitionBias> estimator_biases(const std::vector<WaitSample>& samples, const HistoryPolicy& policy)
{
  std::map<std::string, std::vector<WaitSample>> by_model;
  for (const auto& s : samples) {
    if (!s.model.empty()) {
      by_model[s.model].push_back(s);
    }
  }
  std::vector<PartitionBias> out;
  for (const auto& [model, list] : by_model) {
    for (auto& b : partition_biases(list, policy)) {
      b.model = model;
      out.push_back(std::move(b));
    }
  }
  return out;
}

namespace {

// |error| of `estimate` against sample `s`, or nullopt when `s` says nothing about it.
std::optional<std::int64_t> abs_error(const WaitSample& s, std::int64_t estimate)
{
  if (s.censored && s.actual_s <= estimate) {
    return std::nullopt; // cancelled before the estimated start: no information
  }
  return std::llabs(s.actual_s - estimate);
}

} // namespace

std::vector<EstimateErrors> estimate_errors(const std::vector<WaitSample>& samples)
{
  struct Errors {
    std::vector<std::int64_t> rv, slurm, rv_paired, slurm_paired;
  };
  std::map<std::string, Errors> by_partition;
  for (const auto& s : samples) {
    auto& e = by_partition[s.partition];
    const auto rv = abs_error(s, s.predicted_s);
    const auto slurm = s.slurm_s ? abs_error(s, *s.slurm_s) : std::nullopt;
    if (rv) {
      e.rv.push_back(*rv);
    }
    if (slurm) {
      e.slurm.push_back(*slurm);
    }
    if (rv && slurm) {
      e.rv_paired.push_back(*rv);
      e.slurm_paired.push_back(*slurm);
    }
  }
  std::vector<EstimateErrors> out;
  for (auto& [name, e] : by_partition) {
    out.push_back({name, static_cast<int>(e.rv.size()), median(e.rv), static_cast<int>(e.slurm.size()), median(e.slurm),
                   static_cast<int>(e.rv_paired.size()), median(e.rv_paired), median(e.slurm_paired)});
  }
  return out;
}

void correct_estimates(std::vector<model::Strategy>& strategies, const std::vector<PartitionBias>& biases,
                       std::vector<std::string>& notes)
{
  for (const auto& b : biases) {
    if (!b.systematic) {
      continue;
    }
    int corrected = 0;
    for (auto& s : strategies) {
      if (s.partition != b.partition || model::to_string(s.wait_model) != b.model || !s.est_wait_s) {
        continue;
      }
      const auto before = *s.est_wait_s;
      s.est_wait_s = std::max<std::int64_t>(0, before + b.median_error_s);
      s.reasons.push_back(fmt::format("wait corrected by history: {} s -> {} s ({} on {} for {}'s estimates: {})",
                                      before, *s.est_wait_s, signed_duration(b.median_error_s), b.partition,
                                      b.model.empty() ? "every estimator" : b.model, b.why));
      ++corrected;
    }
    if (corrected > 0) {
      notes.push_back(fmt::format("history: {}estimates on {} corrected by {} ({}); `rv stats` shows the history",
                                  b.model.empty() ? "" : b.model + " ", b.partition, signed_duration(b.median_error_s),
                                  b.why));
    }
  }
}

} // namespace rv::strategy
