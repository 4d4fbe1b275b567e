#pragma once
// Parsers for `scontrol show node|partition|job|config|reservation` (multi-line or `-o`).

#include "core/model/cluster.hpp"
#include "core/result.hpp"
#include "slurm/cluster_time.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// One `Key=Value ...` record as views into the text it was read from (valid as long as that
// text is); keys in print order. A key printed twice is in `fields` twice; get() and value()
// give the first, as Record (which keeps only the first) does.
struct RecordView {
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  // The value of `key`, or nullptr; exact, case-sensitive (`NodeList` is not `ReqNodeList`).
  const std::string_view* get(std::string_view key) const;
  // The value of `key`, or "" when absent or a null marker.
  std::string_view value(std::string_view key) const;
};

// The same record owning its text, for callers that keep it (JobInfo::raw); a key printed twice
// keeps its first value only.
struct Record {
  std::vector<std::pair<std::string, std::string>> fields;
  static Record from(const RecordView& v);
  const std::string* get(std::string_view key) const;
  std::string value(std::string_view key) const;
};

// Splits scontrol output into records one at a time, without copying: a record starts where its
// first key repeats, so both the multi-line and the `-o` one-line layouts work. Prose ("No jobs
// in the system") gives none. A key starts at the line start or after a blank, with an upper-case
// letter: values keep their inner spaces (Reason=..., OS=Linux ... #1 SMP) up to the next key.
class RecordReader {
public:
  explicit RecordReader(std::string_view text) : rest_(text) {}
  // The next record, or nullptr after the last; valid until the next call.
  const RecordView* next();

private:
  bool load_line();
  std::string_view rest_, line_, first_key_;
  std::vector<std::pair<std::size_t, std::size_t>> keys_; // the line's keys: (pos, length)
  std::size_t k_ = 0;                                     // the next key of keys_ to read
  bool done_ = false;
  RecordView cur_;
};

// Every record of `text`, owning copies (RecordReader reads large outputs without them).
Result<std::vector<Record>> parse_records(std::string_view text);

// Parses `scontrol -d -o show node` (or without -d/-o) into nodes.
Result<std::vector<model::Node>> parse_scontrol_nodes(std::string_view text);

// Converts one node record; GPUs from Gres (CfgTRES as fallback), used GPUs from GresUsed
// (only with -d) or AllocTRES when it lists gres/gpu.
Result<model::Node> node_from_record(const RecordView& r);

// Parses `scontrol -o show partition` (or multi-line) into partitions, hostlists expanded;
// fails when they name more than max_hosts hosts in all.
Result<std::vector<model::Partition>> parse_scontrol_partitions(std::string_view text);

// Parses a TRESBillingWeights value (`CPU=1.0,Mem=0.25G,GRES/gpu:a100=3`); Mem is per GiB.
Result<model::BillingWeights> parse_billing_weights(std::string_view text);

// Parses `scontrol show config` (`Key = value` lines) into the scheduler settings.
Result<model::SchedulerConfig> parse_scontrol_config(std::string_view text);

// What rv needs from `scontrol show job <id>`.
struct JobInfo {
  std::string job_id;
  std::string name;
  std::string state;  // JobState, e.g. RUNNING, PENDING, FAILED
  std::string reason; // Reason, "" for None
  std::string partition;
  std::string nodes;          // NodeList (the allocation), "" while pending
  std::string batch_host;     // BatchHost
  std::int64_t priority = -1; // Priority (0 = held), -1 = not printed
  std::string sched_nodes;    // SchedNodeList: where the backfill plans to start it, "" if none
  std::string dependency;     // Dependency, e.g. `afterok:240(unfulfilled)`, "" if none
  int exit_status = 0;        // ExitCode=status:signal
  int exit_signal = 0;
  std::optional<ClusterTime> submit_time, start_time, end_time; // cluster-local
  std::int64_t time_limit_s = -1;                               // -1 = UNLIMITED
  std::int64_t time_min_s = -1;                                 // -1 = none
  std::int64_t run_time_s = 0;
  std::string tres;                 // TRES= (allocated, or requested while pending)
  std::vector<model::GpuGres> gpus; // from TRES, else TresPerNode x nodes
  Record raw;
};

// Parses `scontrol show job` output (one or several jobs).
Result<std::vector<JobInfo>> parse_scontrol_jobs(std::string_view text);

} // namespace rv::slurm
