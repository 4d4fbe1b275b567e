#pragma once
// The watchdog's samples as rv reads them (docs/gpu.md, "The watchdog"): parsed, judged (idle,
// flat, hang?) and shown by `rv ps` and `rv gpu`. Pure but for read_watchdog_end: the read
// command is built here and run by the caller in a round trip it makes anyway (proc::ReadAlong
// carries it on that round trip's first command).

#include "app/request/requests.hpp"
#include "core/process/runner.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

// One line of a node's samples file: `t=<epoch> job=<id> util=<%,...> mem=<MiB,...> log=<bytes>`.
struct WatchdogSample {
  std::int64_t t = 0;
  std::string job;
  std::vector<std::optional<int>> util;         // per GPU; nullopt: no value (`?`)
  std::vector<std::optional<std::int64_t>> mem; // per GPU, MiB
  std::optional<std::int64_t> log_bytes;
  bool read = false; // nvidia-smi answered (util/mem were not `-`)
};

// The samples of a file's text, oldest first; malformed or cut-off lines are skipped.
std::vector<WatchdogSample> parse_samples(std::string_view text);

// What the samples say about a running job.
struct Activity {
  std::optional<std::int64_t> idle_s; // every GPU of every node at 0 % for this long
  std::optional<std::int64_t> flat_s; // the log and every GPU unchanged for this long
  bool hang = false;                  // a multi-node job flat for long enough to say "hang?"
  bool at_least = false;              // the streak reaches back to the oldest sample read
  std::int64_t sampled_at = 0;        // the newest sample's time; 0 = no sample of the job
  int nodes = 0;                      // nodes with samples of the job
};

// A streak counts from this many sampling intervals on (5 min at the default 1 min), so a job
// between two steps is not called idle.
inline constexpr int k_idle_shown_intervals = 5;
inline constexpr int k_hang_shown_intervals = 10;
// Lines read from the end of each node's file: 4 h at one sample a minute.
inline constexpr int k_samples_read = 240;

// Judges the samples of job `job_id` on `nodes` (every node of the allocation): a node without
// fresh samples (none within 3 intervals of the newest) makes the job neither idle nor flat.
// `interval_s` is the sampling interval the job was given (the samples' own spacing is used when
// they show it).
Activity assess(const std::map<std::string, std::vector<WatchdogSample>>& by_node,
                const std::vector<std::string>& nodes, const std::string& job_id, std::int64_t interval_s,
                bool multi_node);

// "idle 42m", "idle 4h+", "hang? 15m", or "" when neither is shown.
std::string activity_text(const Activity& a);

// {"idle_s": N|null, "flat_s": N|null, "hang": bool, "at_least": bool, "sampled_at": epoch|null,
//  "nodes": N, "text": "idle 42m"|""}: docs/gpu.md.
nlohmann::json to_json(const Activity& a);

// The command that prints the last k_samples_read lines of every node's samples file of each
// request in `dirs` (watchdog directories), each file after a `==> <path>` line.
proc::Command samples_command(const std::vector<std::string>& dirs);

// Splits samples_command's output by watchdog directory and node: dir -> node -> samples.
std::map<std::string, std::map<std::string, std::vector<WatchdogSample>>> split_samples(std::string_view out);

// The requests of `requests` whose winner runs now (by the record), and their watchdog dirs.
std::vector<std::string> running_watchdog_dirs(const std::vector<RequestRecord>& requests);

// The watchdog's verdict on request `r` (its winner) from split_samples' output; nullopt when the
// winner does not run or nothing was sampled.
std::optional<Activity>
activity_of(const RequestRecord& r,
            const std::map<std::string, std::map<std::string, std::vector<WatchdogSample>>>& all,
            std::int64_t interval_s);

// Why the watchdog ended job `job_id` of request `r` (its `ended.<job id>` file: the exit code and
// the reason), or nullopt when it did not (or the file cannot be read). One round trip.
std::optional<std::pair<int, std::string>> read_watchdog_end(proc::Runner& runner, const RequestRecord& r,
                                                             const std::string& job_id);

} // namespace rv::app
