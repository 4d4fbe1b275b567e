#include "strategy/history.hpp"

#include "core/duration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

// How a bias corrects: "x0.30" or "by -7m".
std::string by(const PartitionBias& b)
{
  return b.scaled ? fmt::format("x{:.2g}", b.median_ratio) : "by " + signed_duration(b.median_error_s);
}

} // namespace

namespace {

// The bias of the samples `group` (the partition's, or every partition's) under the name `name`.
PartitionBias bias_of(const std::string& name, const std::vector<const WaitSample*>& group, const HistoryPolicy& policy)
{
  PartitionBias b;
  b.partition = name;
  std::vector<std::int64_t> e;
  std::vector<double> r;
  for (const auto* s : group) {
    if (s->censored) {
      if (s->actual_s <= s->predicted_s) {
        continue; // cancelled before the predicted start: no information
      }
      ++b.censored;
    } else {
      ++b.started;
    }
    e.push_back(s->actual_s - s->predicted_s);
    if (s->predicted_s > 0) {
      r.push_back(static_cast<double>(s->actual_s) / static_cast<double>(s->predicted_s));
    }
  }
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
  b.ratio_samples = static_cast<int>(r.size());
  if (!r.empty()) {
    std::sort(r.begin(), r.end());
    b.median_ratio = r[(r.size() - 1) / 2];
  }
  if (b.systematic && b.ratio_samples >= policy.min_samples) {
    b.scaled = true;
    b.why += fmt::format(", actual/predicted median {:.2g} over {}", b.median_ratio, b.ratio_samples);
  }
  return b;
}

} // namespace

std::vector<PartitionBias> partition_biases(const std::vector<WaitSample>& samples, const HistoryPolicy& policy)
{
  std::map<std::string, std::vector<const WaitSample*>> by_partition;
  for (const auto& s : samples) {
    by_partition[s.partition].push_back(&s);
  }
  std::vector<PartitionBias> list;
  for (const auto& [name, group] : by_partition) {
    list.push_back(bias_of(name, group, policy));
  }
  return list;
}

PartitionBias host_bias(const std::vector<WaitSample>& samples, const HistoryPolicy& policy)
{
  std::vector<const WaitSample*> all;
  for (const auto& s : samples) {
    all.push_back(&s);
  }
  auto b = bias_of("", all, policy);
  b.why = "every partition: " + b.why;
  return b;
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
                       std::vector<std::string>& notes, const HistoryPolicy& policy)
{
  const PartitionBias* host = nullptr;
  std::map<std::string, const PartitionBias*> own;
  for (const auto& b : biases) {
    (b.partition.empty() ? host : own[b.partition]) = &b;
  }
  std::map<std::string, std::pair<const PartitionBias*, int>> corrected; // by partition: the bias used, strategies
  for (auto& s : strategies) {
    const auto it = own.find(s.partition);
    const bool enough = it != own.end() && it->second->started + it->second->censored >= policy.min_samples;
    const PartitionBias* b = enough ? it->second : host != nullptr && host->scaled ? host : nullptr;
    if (b == nullptr || !b->systematic || !s.est_wait_s) {
      continue;
    }
    const auto before = *s.est_wait_s;
    s.est_wait_s = b->scaled ? std::llround(static_cast<double>(before) * b->median_ratio)
                             : std::max<std::int64_t>(0, before + b->median_error_s);
    s.reasons.push_back(fmt::format("wait corrected by history: {} s -> {} s ({} on {}: {})", before, *s.est_wait_s,
                                    by(*b), s.partition, b->why));
    corrected[s.partition] = {b, corrected[s.partition].second + 1};
  }
  for (const auto& [partition, used] : corrected) {
    notes.push_back(fmt::format("history: estimates on {} corrected {} ({}); `rv stats` shows the history", partition,
                                by(*used.first), used.first->why));
  }
}

} // namespace rv::strategy
