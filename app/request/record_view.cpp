#include "app/request/record_view.hpp"

#include "core/duration.hpp"
#include "core/store/json_fields.hpp"
#include "slurm/job_state.hpp"
#include "slurm/pending_reason.hpp"

#include <fmt/format.h>

namespace rv::app {

std::string git_label(const RequestRecord& r)
{
  using namespace store;
  const auto& g = object_field(r.sync, "git");
  if (g.empty()) {
    return {};
  }
  return fmt::format("  [{}@{}{}]", text_field(g, "branch", "?"), text_field(g, "commit", "?"),
                     bool_field(g, "dirty") ? "*" : "");
}

std::string job_detail(const JobRecord& j)
{
  if (!j.node_list.empty()) {
    return j.elapsed_s > 0 ? fmt::format("{} {}", j.node_list, format_human_duration(j.elapsed_s)) : j.node_list;
  }
  if (!j.error.empty()) {
    return j.error;
  }
  if (slurm::is_terminal(j.state)) {
    return {};
  }
  const auto plain = slurm::plain_reason(j.reason);
  std::string d = j.reason.empty() ? "" : plain == j.reason ? "(" + j.reason + ")" : plain + " (" + j.reason + ")";
  if (!j.start_estimate.empty()) {
    d += (d.empty() ? "" : " ") + std::string("start ~") + j.start_estimate;
  }
  return d;
}

std::string state_label(const RequestRecord& r)
{
  if (r.state == RequestState::cancelled) {
    const auto chosen = store::text_field(r.race, "chosen");
    if (!chosen.empty() && chosen != r.id) {
      return "lost";
    }
  }
  return std::string(to_string(r.state));
}

double planned_su(const RequestRecord& rec, const std::string& strategy_id)
{
  for (const auto& s : store::array_field(rec.plan, "strategies")) {
    if (store::text_field(s, "id") == strategy_id) {
      return store::number_field(s, "est_su", 0.0);
    }
  }
  return 0;
}

} // namespace rv::app
