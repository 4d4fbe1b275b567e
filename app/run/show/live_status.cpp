#include "app/run/show/live_status.hpp"

#include "core/store/json_bytes.hpp"

#include <fmt/format.h>

#include <utility>

namespace rv::app {

ProgressMode progress_mode(const Env& env)
{
  if (env.quiet) {
    return ProgressMode::quiet;
  }
  if (env.json) {
    return ProgressMode::json;
  }
  return env.output.terminal().tty ? ProgressMode::live : ProgressMode::plain;
}

LiveStatus::LiveStatus(Env& env, bool events) : m_env(env), m_mode(progress_mode(env))
{
  if (m_mode == ProgressMode::json && !events) {
    m_mode = ProgressMode::quiet;
  }
}

LiveStatus::~LiveStatus()
{
  clear();
}

void LiveStatus::draw()
{
  if (m_mode != ProgressMode::live || m_streaming) {
    return;
  }
  const auto t = m_env.output.terminal();
  m_env.output.status(status_block(m_view, m_env.clock.epoch_seconds(), t.color, t.width));
  m_shown = true;
}

void LiveStatus::clear()
{
  if (m_shown) {
    m_env.output.status({});
    m_shown = false;
  }
}

void LiveStatus::phase(const std::string& text, bool terminal_only)
{
  m_view = StatusView{text, {}, 0};
  if (m_mode == ProgressMode::live) {
    draw();
  } else if (m_mode == ProgressMode::plain && !terminal_only) {
    m_env.output.err("rv: " + text + "\n");
  }
}

void LiveStatus::begin_wait(const RequestRecord& rec)
{
  const auto n = rec.job_ids().size();
  m_view.title = n == 1 ? fmt::format("request {}: waiting for its job to start", rec.id)
                        : fmt::format("request {}: waiting for the first of {} strategies to start", rec.id, n);
  m_view.jobs = rec.jobs;
  m_view.since_epoch = m_env.clock.epoch_seconds();
}

void LiveStatus::waiting(const RequestRecord& rec)
{
  begin_wait(rec);
  draw();
  if (m_mode == ProgressMode::plain) {
    m_env.output.err("rv: " + m_view.title + "\n"); // the wait in one line; -v adds each change of each job
  }
}

void LiveStatus::jobs(const RequestRecord& rec)
{
  if (m_view.since_epoch == 0) {
    begin_wait(rec);
  }
  m_view.jobs = rec.jobs;
  const auto elapsed = m_env.clock.epoch_seconds() - m_view.since_epoch;
  if (m_mode == ProgressMode::live) {
    draw();
    return;
  }
  for (const auto& j : rec.jobs) {
    if (j.job_id.empty()) {
      continue;
    }
    auto key = job_status_key(j);
    auto& seen = m_seen[j.job_id];
    if (seen == key) {
      continue;
    }
    seen = std::move(key);
    if (m_mode == ProgressMode::plain && m_env.verbosity > 0) {
      m_env.output.err(job_status_line(j, elapsed));
    } else if (m_mode == ProgressMode::json) {
      event(state_event(rec.id, j, elapsed));
    }
  }
}

void LiveStatus::event(nlohmann::json e)
{
  if (m_mode != ProgressMode::json) {
    return;
  }
  e["time"] = m_env.clock.epoch_seconds();
  m_env.output.out(store::dump_for_display(e, -1) + "\n");
}

void LiveStatus::output_starts(const std::string& request_id, const std::string& job_id)
{
  clear();
  m_streaming = true;
  event({{"event", "output_started"}, {"request", request_id}, {"job_id", job_id}});
}

JobOutput::JobOutput(Env& env, LiveStatus& status, std::string request_id, std::string job_id, std::string node)
    : m_env(env), m_status(status), m_request(std::move(request_id)), m_job(std::move(job_id)), m_node(std::move(node))
{}

JobOutput::~JobOutput()
{
  flush();
}

void JobOutput::set_job(const std::string& job_id)
{
  flush();
  m_job = job_id;
}

void JobOutput::out(std::string_view text)
{
  write(text, false, false);
}

void JobOutput::err(std::string_view text)
{
  const auto shown = m_env.verbosity > 0 ? std::string(text) : sift_err(text);
  if (!shown.empty()) {
    write(shown, true, true);
  }
}

std::string JobOutput::sift_err(std::string_view text)
{
  std::string shown;
  for (char c : text) {
    if (m_line_start) {
      m_line_start = false;
      m_held.clear();
      m_held += c;
    } else if (!m_held.empty()) {
      m_held += c;
    } else {
      shown += c;
      m_line_start = c == '\n';
      continue;
    }
    if (c == '\n') {
      m_line_start = true;
      if (!is_job_side_line(m_held) || job_side_line_matters(m_held)) {
        shown += m_held;
      }
      m_held.clear();
    } else if (!may_be_job_side_line(m_held)) {
      shown += m_held; // the program's own line: on at once, byte for byte
      m_held.clear();
    }
  }
  return shown;
}

namespace {
constexpr std::string_view k_job_prefixes[] = {"rv: ", "rv preflight: "};
} // namespace

bool may_be_job_side_line(std::string_view partial)
{
  for (auto p : k_job_prefixes) {
    if (partial.starts_with(p) || p.starts_with(partial)) {
      return true;
    }
  }
  return false;
}

bool is_job_side_line(std::string_view line)
{
  for (auto p : k_job_prefixes) {
    if (line.starts_with(p)) {
      return true;
    }
  }
  return false;
}

bool job_side_line_matters(std::string_view line)
{
  for (auto word : {"FAIL", "fail", "warning", "watchdog", "error", "cannot"}) {
    if (line.find(word) != std::string_view::npos) {
      return true;
    }
  }
  constexpr std::string_view exited = "exited with status ";
  const auto at = line.find(exited);
  return at != std::string_view::npos && line.substr(at + exited.size()).find_first_not_of("0\n") == 0;
}

void JobOutput::log_text(std::string_view text, bool err_log)
{
  write(text, err_log, false);
}

void JobOutput::write(std::string_view text, bool err, bool to_err)
{
  if (text.empty()) {
    return;
  }
  if (!m_started) {
    m_started = true;
    m_status.output_starts(m_request, m_job); // before the first byte
  }
  if (!m_env.json) {
    to_err ? m_env.output.err(text) : m_env.output.out(text);
    return;
  }
  auto& partial = m_partial[err ? 1 : 0];
  partial.append(text);
  std::size_t from = 0;
  for (auto nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', from)) {
    emit(std::string_view(partial).substr(from, nl + 1 - from), err);
    from = nl + 1;
  }
  partial.erase(0, from);
}

void JobOutput::emit(std::string_view line, bool err)
{
  nlohmann::json e = {{"event", "output"},
                      {"request", m_request},
                      {"job_id", m_job},
                      {"node", m_node},
                      {"stream", err ? "stderr" : "stdout"},
                      {"text", std::string(line)},
                      {"time", m_env.clock.epoch_seconds()}};
  m_env.output.out(store::dump_for_display(e, -1) + "\n");
}

void JobOutput::flush()
{
  if (!m_held.empty()) { // a last line without a newline
    write(std::exchange(m_held, {}), true, true);
  }
  for (int s = 0; s < 2; ++s) {
    if (!m_partial[s].empty()) {
      emit(m_partial[s], s == 1);
      m_partial[s].clear();
    }
  }
}

} // namespace rv::app
