#pragma once
// The live status while rv waits, as a pure renderer: the request's siblings and the time come
// in, lines (and the terminal control that draws them in place) come out. It never writes,
// reads the clock or asks the terminal: app/run/show/live_status.hpp feeds it, app::Output draws it.

#include "app/request/requests.hpp"
#include "app/run/show/final_status.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rv::app {

// What the status shows: a title (a phase, or the wait) and the submitted siblings.
struct StatusView {
  std::string title;            // "submitting 4 strategies", "waiting for request 3f9c02ab"
  std::vector<JobRecord> jobs;  // rank order; those without a job id (refused) are not shown
  std::int64_t since_epoch = 0; // when this began: the elapsed time counts from it (0 = none)
};

// Elapsed time as a counter: `0:07`, `12:05`, `1:02:03`.
std::string elapsed_text(std::int64_t seconds);

// A job's state for people, one line's worth without its strategy: `PENDING: waiting for free
// GPUs (Resources), est. start 2026-11-22T14:05:00`, `RUNNING on a6000-1`, `REFUSED: why`.
// Cluster strings are made printable (core/printable.hpp).
std::string job_state_text(const JobRecord& j);

// What makes a job's status line change: state, reason, estimated start, nodes.
std::string job_status_key(const JobRecord& j);

// The block for a terminal: the title with the elapsed time, then one line per submitted
// sibling. `color` adds SGR colours to the states; each line is cut to `width - 1` columns
// when `width` > 0 (a wrapped line would break the redraw). No newlines, no cursor control.
std::vector<std::string> status_block(const StatusView& view, std::int64_t now_epoch, bool color, int width);

// One plain line (no control sequences, newline-terminated) about a job that changed, for
// stderr that is not a terminal: `rv: s1 (job 301): PENDING: waiting for free GPUs (Resources) [0:12]`.
std::string job_status_line(const JobRecord& j, std::int64_t elapsed_s);

// Terminal control: draws `lines` in place of a block of `rows` lines drawn just before (the
// cursor below it), wrapping off while drawing.
std::string redraw_block(std::size_t rows, const std::vector<std::string>& lines);
// Erases a block of `rows` lines drawn just before; the cursor ends where the block began.
std::string erase_block(std::size_t rows);

// "submitting 4 strategies to rvtest@login:22": the submit phase's line.
std::string submitting_text(std::size_t strategies, const std::string& host);

// The `--json` events (docs/events.md), without their `time`: the request submitted (every
// sibling, refused ones with Slurm's error), a job's state changed, the followed job ended.
nlohmann::json submitted_event(const RequestRecord& rec);
nlohmann::json state_event(const std::string& request_id, const JobRecord& j, std::int64_t elapsed_s);
nlohmann::json ended_event(const std::string& request_id, const FinalStatus& status, int exit_code);

} // namespace rv::app
