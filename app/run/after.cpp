#include "app/run/after.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "core/interrupt.hpp"
#include "slurm/backoff.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rv::app {
namespace {

const char* kind_name(AfterKind k)
{
  return k == AfterKind::ok ? "ok" : "any";
}

// A job of `first` Slurm may still hold: it has an id and no recorded end.
bool live(const JobRecord& j)
{
  if (j.job_id.empty()) {
    return false;
  }
  return !slurm::is_terminal(j.state); // pending, running, requeued, suspended...; unknown: not seen yet
}

} // namespace

Result<AfterSpec> parse_after(std::string_view text)
{
  AfterSpec spec;
  std::string_view id = text;
  if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
    const auto kind = text.substr(colon + 1);
    id = text.substr(0, colon);
    if (kind == "ok") {
      spec.kind = AfterKind::ok;
    } else if (kind == "any") {
      spec.kind = AfterKind::any;
    } else {
      return fail(
          ErrorCode::usage, fmt::format("--after {}: '{}' is neither ok nor any", text, kind),
          "--after REQ (its success), --after REQ:ok (the same) or --after REQ:any (its end, however it ended)");
    }
  }
  if (id.empty() || id.find_first_of(" \t\n,") != std::string_view::npos) {
    return fail(ErrorCode::usage, fmt::format("--after '{}' names no request", text),
                "a request id, job id or name as rv ps shows it, e.g. --after 3f9c02ab:ok");
  }
  spec.request = std::string(id);
  return spec;
}

Result<void> may_start_after(const RequestRecord& first, const AfterSpec& spec)
{
  if (spec.kind == AfterKind::ok && first.state != RequestState::done) {
    return fail(ErrorCode::usage,
                fmt::format("request {} {}, so --after {}:ok can never start", first.id,
                            first.state == RequestState::cancelled ? "was cancelled" : "failed", first.id),
                fmt::format("--after {}:any starts after its end however it ended (rv logs {} says why it failed)",
                            first.id, first.id));
  }
  return {};
}

Result<AfterDecision> decide_after(const RequestRecord& first, const AfterSpec& spec, bool same_cluster)
{
  AfterDecision d;
  d.record = {{"request", first.id}, {"kind", kind_name(spec.kind)}};
  if (is_final_state(first.state)) {
    RV_TRY_VOID(may_start_after(first, spec));
    d.mode = AfterDecision::Mode::now;
    d.note = fmt::format("request {} has already ended ({}): this one starts as any other", first.id,
                         to_string(first.state));
    return d;
  }
  if (!same_cluster) {
    d.mode = AfterDecision::Mode::wait;
    d.note = fmt::format("request {} runs on {}: rv waits for its end{}, then submits this one", first.id,
                         first.destination.empty() ? first.host : first.destination,
                         spec.kind == AfterKind::ok ? " (a success)" : "");
    return d;
  }
  std::vector<std::string> ids;
  if (const auto* w = first.winner_job(); w != nullptr && !w->job_id.empty()) {
    ids.push_back(w->job_id);
  } else {
    for (const auto& j : first.jobs) {
      if (live(j)) {
        ids.push_back(j.job_id);
      }
    }
  }
  if (ids.empty()) {
    return fail(ErrorCode::usage,
                fmt::format("request {} has no job Slurm holds yet (state {})", first.id, to_string(first.state)),
                fmt::format("rv ps {} shows it; try again once it is submitted", first.id));
  }
  d.mode = AfterDecision::Mode::dependency;
  if (spec.kind == AfterKind::ok) {
    // Any sibling that ends well: only the winner runs the command; cancelled losers never do.
    std::vector<std::string> parts;
    for (const auto& id : ids) {
      parts.push_back("afterok:" + id);
    }
    d.dependency = fmt::format("{}", fmt::join(parts, "?"));
  } else {
    // Every sibling has ended: the losers once cancelled, the winner once its command ended.
    d.dependency = "afterany:" + fmt::format("{}", fmt::join(ids, ":"));
  }
  d.record["dependency"] = d.dependency;
  d.note = ids.size() == 1 ? fmt::format("starts after job {} of request {} {}", ids.front(), first.id,
                                         spec.kind == AfterKind::ok ? "succeeds" : "ends")
                           : fmt::format("starts after request {} {} (its winner, among jobs {})", first.id,
                                         spec.kind == AfterKind::ok ? "succeeds" : "ends", fmt::join(ids, ", "));
  return d;
}

Result<AfterDecision> resolve_after(Env& env, const AfterSpec& spec)
{
  RV_TRY(first, find_request(env.requests, spec.request));
  const bool across = env.settings.hosts.size() > 1;
  const auto here = current_host(env);
  const bool same = !across && same_host(first, here);
  if (same && !is_final_state(first.state)) {
    std::vector<RequestRecord> one{first};
    RV_TRY(report, refresh_and_reap(env.cluster, env.clock, env.requests, one));
    for (const auto& n : report.notes) {
      spdlog::info("{}", n);
    }
    first = std::move(one.front());
  }
  return decide_after(first, spec, same);
}

Result<RequestRecord> wait_for_end(Env& env, const std::string& id)
{
  slurm::Backoff backoff(slurm::Backoff::waiting());
  for (;;) {
    RV_TRY(rec, find_request(env.requests, id));
    if (!is_final_state(rec.state)) {
      std::vector<RequestRecord> one{rec};
      auto report = refresh_and_reap(env.cluster, env.clock, env.requests, one);
      if (!report) {
        spdlog::warn("--after: cannot ask about request {} now ({}); asking again", id, report.error().message);
      } else {
        rec = std::move(one.front());
      }
    }
    if (is_final_state(rec.state)) {
      return rec;
    }
    if (interrupt_signal() != 0) {
      return fail(ErrorCode::interrupted, fmt::format("interrupted while waiting for request {} to end", id));
    }
    env.clock.sleep_for(backoff.next()); // the one cadence: every 5 s once settled
  }
}

std::vector<RequestRecord> dependents_of(const std::vector<RequestRecord>& requests, const std::string& id)
{
  std::vector<RequestRecord> out;
  for (const auto& r : requests) {
    if (r.after.is_object() && r.after.value("request", "") == id && !is_final_state(r.state)) {
      out.push_back(r);
    }
  }
  return out;
}

} // namespace rv::app
