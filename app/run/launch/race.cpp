#include "app/run/launch/race.hpp"

#include "app/request/reap.hpp"
#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/jobs.hpp"
#include "slurm/monitor.hpp"
#include "slurm/scontrol.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace rv::app {
namespace {

// The look at the winning node's GPUs (scontrol show node of its first node), when it has a
// typed GPU request and a node list; none otherwise.
std::optional<proc::Command> allocation_read(const std::string& node_list, const std::string& gpu_type)
{
  if (node_list.empty() || gpu_type.empty()) {
    return std::nullopt;
  }
  auto hosts = slurm::expand_hostlist(node_list);
  if (!hosts || hosts->empty()) {
    return std::nullopt;
  }
  proc::Command c;
  c.argv = slurm::show_node_argv(hosts->front());
  c.timeout = std::chrono::seconds(30);
  c.repeatable = true;
  return c;
}

// For multi-node jobs: GPUs on different nodes talk over the network.
void warn_spread(const JobRecord& winner)
{
  if (winner.nodes > 1) {
    spdlog::warn("{} spans {} nodes: GPUs on different nodes talk over the network (NCCL over InfiniBand or "
                 "Ethernet), not NVLink",
                 winner.job_id, winner.nodes);
  }
}

// Warns when the winning node's real GPU type (allocation_read's answer) differs from the
// strategy's: a partition can hold nodes of another type.
void check_gpu_type(const JobRecord& winner, const proc::Outcome& o)
{
  if (!o.ok()) {
    return;
  }
  auto nodes = slurm::parse_scontrol_nodes(o.out);
  if (!nodes || nodes->empty()) {
    return;
  }
  std::string types;
  for (const auto& g : nodes->front().gpus) {
    if (g.type == winner.gpu_type) {
      return;
    }
    types += (types.empty() ? "" : ",") + (g.type.empty() ? std::string("untyped") : g.type);
  }
  spdlog::warn("job {} asked for {} GPUs but node {} has {}: the partition mixes GPU types", winner.job_id,
               winner.gpu_type, slurm::expand_hostlist(winner.node_list)->front(), types.empty() ? "no GPUs" : types);
}

// The spread warning and the GPU-type check. `read`: scontrol's answer already read in the race's
// last round trip (for this node list), else it is asked now.
void check_allocation(proc::Runner& runner, const JobRecord& winner, const std::optional<proc::Outcome>& read)
{
  warn_spread(winner);
  const auto c = allocation_read(winner.node_list, winner.gpu_type);
  if (!c) {
    return;
  }
  if (auto o = read ? Result<proc::Outcome>(*read) : runner.run(*c); o) {
    check_gpu_type(winner, *o);
  }
}

} // namespace

// Races the submitted siblings: the first to start wins, the others are cancelled, Ctrl-C or
// an error cancels everything. Returns the winner's strategy id (also in `l.rec.winner`).
Result<JobRecord> race_request(Env& env, Launched& l, LiveStatus& live, std::optional<AlongRead>* defer)
{
  auto& runner = env.cluster;
  auto& store = env.requests;
  auto& rec = l.rec;
  const auto& paths = l.paths;
  // The race: first to start wins; the others are cancelled; Ctrl-C cancels everything.
  std::vector<slurm::RaceEntry> entries;
  for (const auto& j : rec.jobs) {
    if (!j.job_id.empty()) {
      entries.push_back(slurm::RaceEntry{j.strategy_id, j.job_id, {}, false, {}});
    }
  }
  slurm::Race race(std::move(entries));
  slurm::MonitorOptions mo;
  mo.job_name = rec.name; // scancel --name: a job id Slurm has reused is left alone
  const auto claim_file = paths.requests + "/" + rec.id + "/claim/owner";
  mo.claim_argv = {"cat", claim_file};
  mo.wait_for_claim = [claim_file](std::chrono::milliseconds d) {
    return proc::remote::wait_for_growth_command({{claim_file, 0}}, d);
  };
  mo.on_update = [&](const slurm::Race& rc, const slurm::RaceDecision& d) {
    if (!d.adopted.empty()) { // it claimed the request, yet rv never learnt its id (N3)
      JobRecord& j = rec.jobs.emplace_back();
      j.strategy_id = rc.entries().back().strategy_id;
      j.job_id = d.adopted;
      j.label = "claimed the request; found by its claim after sbatch's answer was lost";
      j.submitted_at = env.clock.epoch_seconds();
      spdlog::warn("job {} claimed request {} though rv never learnt its id (sbatch's answer was lost): adopted",
                   d.adopted, rec.id);
    }
    for (const auto& e : rc.entries()) {
      for (auto& j : rec.jobs) {
        if (j.job_id == e.job_id) {
          const auto before = j.state;
          apply_view(j, e.last);
          if (j.state == slurm::JobState::cancelled &&
              j.started_at == 0) { // cancelled while pending (the winner's guard)
            j.state = before;
            mark_cancelled(j, env.clock.epoch_seconds());
          }
        }
      }
    }
    if (rc.winner()) {
      rec.winner = rc.entries()[*rc.winner()].strategy_id;
      rec.state = RequestState::won;
    }
    save(store, rec);
    live.jobs(rec);
  };
  mo.on_abandon_cancelled = [&](const std::vector<std::string>& ids) {
    for (auto& j : rec.jobs) {
      if (std::find(ids.begin(), ids.end(), j.job_id) != ids.end()) {
        mark_cancelled(j, env.clock.epoch_seconds()); // terminal: recorded, so that nothing cancels the id again
      }
    }
  };
  mo.on_cancel = [&](const std::vector<std::string>& ids) {
    live.event({{"event", "cancelled"}, {"request", rec.id}, {"job_ids", ids}});
  };
  // The winner's node is read in the losers' scancel round trip (issue #38 item 7), for the nodes
  // the deciding poll saw; check_allocation asks again only when the record says other nodes.
  std::string read_for; // the node list the read was made for
  std::optional<proc::Outcome> node_read;
  mo.winner_read = [&](const slurm::RaceEntry& w) -> std::optional<proc::Command> {
    for (const auto& j : rec.jobs) {
      if (j.job_id == w.job_id) {
        read_for = w.last.nodes;
        return allocation_read(w.last.nodes, j.gpu_type);
      }
    }
    return std::nullopt;
  };
  mo.on_winner_read = [&](const proc::Outcome& o) { node_read = o; };
  const auto race_start = env.clock.now();
  live.waiting(rec);
  auto stats = slurm::run_race(runner, env.clock, race, mo);
  live.clear(); // before anything else is said
  if (!stats) {
    clear_interrupt(); // so that the cleanup's commands run
    // A request recorded as ended while a job of it is still queued is one no `rv ps` or `rv stop`
    // looks at again (#15 campaign, seed 1125 run 39: the connection dropped and the race's
    // scancel could not run): then it stays live, for `rv ps` to follow and `rv stop` to cancel.
    std::vector<std::string> alive;
    for (const auto& j : rec.jobs) {
      if (!j.job_id.empty() && !slurm::is_terminal(j.state)) {
        alive.push_back(j.job_id);
      }
    }
    if (!alive.empty()) {
      l.release(); // its jobs keep their secrets file: one may still start
      return fail(stats.error().code,
                  fmt::format("{}; jobs {} may still be queued: `rv stop {}` cancels them", stats.error().message,
                              fmt::join(alive, " "), rec.id),
                  stats.error().hint);
    }
    const auto code = stats.error().code;
    if (rec.after.is_object() && rec.after.contains("dependency") && code == ErrorCode::slurm_rejected) {
      // rv run --after: Slurm cancelled every sibling (--kill-on-invalid-dep), the request it waited
      // for having ended otherwise than needed (app/run/after.hpp).
      const auto first = rec.after.value("request", "?");
      const auto why = fmt::format("{} did not succeed, so --after {}:{} could never start", first, first,
                                   rec.after.value("kind", "ok"));
      rec.after["cancelled"] = why;
      l.finish(RequestState::cancelled);
      return fail(code, fmt::format("request {} was cancelled: {}", rec.id, why),
                  fmt::format("rv logs {} says why it failed", first));
    }
    l.finish(code == ErrorCode::interrupted || code == ErrorCode::timeout ? RequestState::cancelled
                                                                          : RequestState::failed);
    return std::unexpected(stats.error());
  }
  // The losers rv cancelled are terminal now: recorded, so that no later `rv ps` cancels their ids
  // again (Slurm reuses job ids).
  for (auto& j : rec.jobs) {
    if (std::find(stats->cancelled.begin(), stats->cancelled.end(), j.job_id) != stats->cancelled.end()) {
      mark_cancelled(j, env.clock.epoch_seconds());
    }
  }
  save(store, rec);
  const auto* winner = rec.winner_job();
  if (!winner) {
    return fail(ErrorCode::generic, "the race ended without a winner");
  }
  const double secs = std::chrono::duration<double>(env.clock.now() - race_start).count();
  live.event({{"event", "winner"},
              {"request", rec.id},
              {"strategy", winner->strategy_id},
              {"job_id", winner->job_id},
              {"nodes", winner->node_list},
              {"label", winner->label},
              {"waited_s", static_cast<std::int64_t>(secs)}});
  std::string siblings;
  if (!stats->cancelled.empty()) {
    siblings = fmt::format("; cancelled {}", fmt::join(stats->cancelled, " "));
  } else if (rec.jobs.size() > 1) {
    // The winner's guard cancels them as it starts: they may not have ended yet (#24 item 9).
    siblings = fmt::format("; the winner's job cancels its {} {}", rec.jobs.size() - 1,
                           rec.jobs.size() == 2 ? "sibling" : "siblings");
  }
  spdlog::info("{} won: job {} on {} after {:.1f} s ({}){}", winner->strategy_id, winner->job_id,
               winner->node_list.empty() ? "?" : winner->node_list, secs, winner->label, siblings);
  const bool read_done = node_read && read_for == winner->node_list;
  if (!read_done && defer) {
    if (auto c = allocation_read(winner->node_list, winner->gpu_type)) {
      // Not carried by a scancel: the follow's first round trip carries it (issue #38 item 7).
      warn_spread(*winner);
      *defer = AlongRead{std::move(*c), [w = *winner](const proc::Outcome& o) { check_gpu_type(w, o); }};
      return *winner;
    }
  }
  check_allocation(runner, *winner, read_done ? node_read : std::nullopt);
  return *winner;
}

Result<JobRecord> race_request(Env& env, Launched& l)
{
  LiveStatus live(env, false);
  return race_request(env, l, live);
}

} // namespace rv::app
