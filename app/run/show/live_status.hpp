#pragma once
// What the user sees while rv waits (docs/events.md): on a terminal a status block refreshed in
// place, on other stderr one plain line per change, with --json a stream of events on stdout,
// with --quiet nothing. Fed by the loops that already poll (the race, `rv logs -f`); drawn
// through app::Output; the block is gone before the first byte of the job's output and never
// comes back.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/run/show/status_view.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace rv::app {

enum class ProgressMode { quiet, json, plain, live };

// --quiet, --json, a terminal (Output::terminal) or not: in that order.
ProgressMode progress_mode(const Env& env);

class LiveStatus {
public:
  // `events`: this command's stdout is a stream of JSON events with --json (rv run -f, rv logs);
  // without it, --json shows nothing here (the command prints one document of its own).
  LiveStatus(Env& env, bool events);
  ~LiveStatus(); // the block is removed
  LiveStatus(const LiveStatus&) = delete;
  LiveStatus& operator=(const LiveStatus&) = delete;

  ProgressMode mode() const { return m_mode; }

  // A phase ("submitting 4 strategies"): the block's one line on a terminal; a plain line
  // elsewhere unless `terminal_only` (a log line already says it).
  void phase(const std::string& text, bool terminal_only = false);
  // The wait for `rec`'s siblings begins: the elapsed time counts from now.
  void waiting(const RequestRecord& rec);
  // The siblings as the last poll saw them: the block redrawn, or a line (an event) per job
  // whose state, reason, estimate or nodes changed.
  void jobs(const RequestRecord& rec);
  // Writes `e` with its `time` as one JSON line on stdout (events mode only).
  void event(nlohmann::json e);
  // The job's output begins: the block goes for good; an `output_started` event.
  void output_starts(const std::string& request_id, const std::string& job_id);
  // Removes the block (it comes back with the next phase or jobs call, unless output started).
  void clear();

private:
  void begin_wait(const RequestRecord& rec);
  void draw();

  Env& m_env;
  ProgressMode m_mode;
  StatusView m_view;
  std::map<std::string, std::string> m_seen; // job id -> job_status_key last shown
  bool m_shown = false;
  bool m_streaming = false;
};

// The followed job's output as the user gets it: byte for byte, the status removed before the
// first byte; or, with --json, as `output` events of one line each (text keeps its newline).
class JobOutput final : public Output {
public:
  JobOutput(Env& env, LiveStatus& status, std::string request_id, std::string job_id, std::string node);
  ~JobOutput() override; // a last line without a newline is sent too
  void out(std::string_view text) override;
  void err(std::string_view text) override;
  Terminal terminal() const override { return m_env.output.terminal(); }
  // A log file's text (`rv logs`): on stdout, or `output` events of the stream it logged.
  void log_text(std::string_view text, bool err_log);
  // The job that writes from now on (the next checkpoint segment).
  void set_job(const std::string& job_id);
  // Sends the partial lines held back (--json).
  void flush();

private:
  void write(std::string_view text, bool err, bool to_err);
  void emit(std::string_view line, bool err);
  std::string sift_err(std::string_view text); // the stderr text shown, job-side lines held back

  Env& m_env;
  LiveStatus& m_status;
  std::string m_request, m_job, m_node;
  std::string m_partial[2]; // stdout, stderr: an unfinished line (--json)
  bool m_started = false;
  std::string m_held;       // the start of a stderr line that may be one of the job script's
  bool m_line_start = true; // stderr is at the start of a line
};

// The job script's own lines on the job's stderr ("rv: job 45 won request ...", "rv preflight:
// ok ..."): a possible beginning of one (`partial`), or a whole one.
bool may_be_job_side_line(std::string_view partial);
bool is_job_side_line(std::string_view line);

// Whether a job-side line is shown without -v: a failure, a warning, the watchdog, or a command
// that exited with a status other than 0 (#24 item 9: the rest is chatter around the output).
bool job_side_line_matters(std::string_view line);

} // namespace rv::app
