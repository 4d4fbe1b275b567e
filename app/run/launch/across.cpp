#include "app/run/launch/across.hpp"

#include "app/clusters.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "app/run/launch/launch.hpp"
#include "core/interrupt.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/record_store.hpp"
#include "slurm/backoff.hpp"
#include "slurm/monitor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <set>

namespace rv::app {
namespace {

struct Member {
  const ClusterRun* cluster = nullptr;
  SmartRun smart;
  std::optional<Launched> launched;
};

// Every member's jobs cancelled (a Ctrl-C, an error before a choice); each record ends `state`.
void end_all(std::vector<Member>& members, RequestState state)
{
  clear_interrupt(); // so that the cleanup's commands run
  for (auto& m : members) {
    if (!m.launched) {
      continue;
    }
    if (auto s = stop_member(*m.cluster->env, m.launched->rec); !s) {
      spdlog::warn("{}", s.error().message);
      m.launched->release(); // still live: `rv ps` and `rv stop` find it
      continue;
    }
    m.launched->finish(state);
  }
}

std::string members_text(const std::vector<Member>& members)
{
  std::string out;
  for (const auto& m : members) {
    if (m.launched) {
      out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", m.cluster->host, m.launched->rec.id);
    }
  }
  return out;
}

} // namespace

Result<int> launch_across(Env& env, const AcrossPlan& plans, const AcrossLaunch& how)
{
  std::vector<Member> members;
  for (const auto& c : plans.clusters) {
    if (!c.run.plan.strategies.empty()) {
      members.push_back({&c, {}, std::nullopt});
    }
  }
  if (members.empty()) {
    return fail(ErrorCode::no_strategy, "no viable strategy for this request on any cluster",
                "see why with --dry-run -v");
  }
  // Smart execution on every cluster at once: a cluster whose sync failed is left out.
  std::vector<std::string> hosts;
  for (const auto& m : members) {
    hosts.push_back(m.cluster->host);
  }
  auto prepared = on_every_cluster(env, hosts, how.prepare);
  std::vector<Member> ready;
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto& smart = prepared[i].result;
    if (!smart) {
      if (smart.error().code == ErrorCode::interrupted || smart.error().code == ErrorCode::usage) {
        return std::unexpected(smart.error()); // the user's own mistake is the same on every cluster
      }
      spdlog::warn("cluster {} is left out: {}", members[i].cluster->host, smart.error().message);
      continue;
    }
    members[i].smart = std::move(*smart);
    if (members[i].smart.extras.request_id.empty()) {
      members[i].smart.extras.request_id = store::new_request_id();
    }
    ready.push_back(std::move(members[i]));
  }
  members = std::move(ready);
  if (members.empty()) {
    return fail(ErrorCode::generic, "no cluster could be prepared for the request (the reasons are above)");
  }
  nlohmann::json race = {{"group", store::new_request_id()}, {"members", nlohmann::json::array()}, {"chosen", ""}};
  for (const auto& m : members) {
    race["members"].push_back({{"id", m.smart.extras.request_id}, {"host", m.cluster->host}});
  }
  const std::string group = race["group"];
  for (auto& m : members) {
    auto& extras = m.smart.extras;
    extras.gate_wait_s = env.settings.race_gate_wait_s;
    extras.race = race;
    extras.followed = how.mode != AcrossMode::submit;
    if (!how.refanout.is_null()) {
      extras.refanout = how.refanout;
    }
    auto& e = *m.cluster->env;
    auto launched = how.mode == AcrossMode::up
                        ? submit_up(e, m.cluster->run, how.line, m.smart.workdir, extras)
                        : submit_request(e, m.cluster->run, how.line, m.smart.workdir, "run", extras);
    if (!launched) {
      if (launched.error().code == ErrorCode::interrupted) {
        end_all(members, RequestState::cancelled);
        return std::unexpected(launched.error());
      }
      spdlog::warn("cluster {} is left out: {}", m.cluster->host, launched.error().message);
      continue;
    }
    m.launched.emplace(std::move(*launched));
  }
  if (std::none_of(members.begin(), members.end(), [](const Member& m) { return m.launched.has_value(); })) {
    return fail(ErrorCode::slurm_rejected, "no cluster took the request (the reasons are above)");
  }
  const std::string first_id = std::find_if(members.begin(), members.end(), [](const Member& m) {
                                 return m.launched.has_value();
                               })->launched->rec.id;
  if (how.mode == AcrossMode::submit) {
    auto bg = env.clusters ? env.clusters->settle_in_background(first_id)
                           : Result<void>(fail(ErrorCode::generic, "no background rv"));
    for (auto& m : members) {
      if (m.launched) {
        m.launched->release(); // the jobs wait at their gates; the background rv chooses
      }
    }
    if (!bg) {
      spdlog::warn("could not start the background rv that settles race {}: {}; `rv ps` settles it", group,
                   bg.error().message);
    }
    if (env.json) {
      env.output.out(store::dump_for_display(race) + "\n");
    } else if (env.quiet) {
      env.output.out(first_id + "\n");
    } else {
      env.output.out(fmt::format("race {} across {}: the first cluster whose job starts runs it; the others are "
                                 "cancelled\nnext: rv logs -f {}   (wait for the winner and follow it)\n      rv ps\n",
                                 group, members_text(members), first_id));
    }
    return 0;
  }
  // The race across clusters: rv chooses; each member's in-job claim settles ties inside a cluster.
  std::vector<RaceMember> racing;
  std::vector<std::size_t> index; // racing[i] is members[index[i]]
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].launched) {
      racing.push_back({members[i].launched->rec, members[i].cluster->env});
      index.push_back(i);
    }
  }
  spdlog::info("race {} across {}", group, members_text(members));
  slurm::Backoff backoff(slurm::Backoff::settling());
  std::set<std::string> said;
  std::optional<std::size_t> chosen;
  for (;;) {
    if (interrupt_signal() != 0) {
      end_all(members, RequestState::cancelled);
      return fail(ErrorCode::interrupted, fmt::format("interrupted: cancelled every job of race {}", group));
    }
    auto step = settle_step(env, racing);
    if (!step) {
      spdlog::warn("race {}: {}", group, step.error().message);
    } else {
      for (const auto& u : step->unreached) {
        if (said.insert(u.substr(0, u.find(':'))).second) {
          spdlog::warn("race {}: cannot reach {}; the race goes on with the other clusters", group, u);
        }
      }
      if (step->chosen) {
        chosen = index[*step->chosen];
        break;
      }
      if (step->over) {
        for (auto& m : members) {
          if (m.launched) {
            m.launched->finish(RequestState::failed);
          }
        }
        return fail(ErrorCode::slurm_rejected,
                    fmt::format("every job of race {} ended before any started (rv ps shows their states)", group));
      }
    }
    env.clock.sleep_for(backoff.next());
  }
  auto& winner = members[*chosen];
  for (auto& m : members) {
    if (&m == &winner || !m.launched) {
      continue;
    }
    // settle_step ended its jobs (then its stored record is cancelled): this removes its secrets.
    // A cluster that could not be reached keeps it live, for `rv ps` to stop it later.
    auto stored = env.requests.read(m.launched->rec.id);
    auto rec = stored ? request_from_json(*stored) : Result<RequestRecord>(std::unexpected(stored.error()));
    if (rec && is_final_state(rec->state)) {
      m.launched->finish(rec->state);
    } else {
      m.launched->release();
    }
  }
  spdlog::info("race {}: a job on {} (cluster {}) started first: request {} runs there; the other clusters' jobs "
               "are cancelled",
               group, winner.cluster->host, winner.cluster->run.cluster.config.cluster_name, winner.launched->rec.id);
  auto& e = *winner.cluster->env;
  if (how.mode == AcrossMode::up) {
    return attach_up(e, winner.cluster->run, std::move(*winner.launched), how.line, winner.smart.workdir,
                     winner.smart.extras);
  }
  RetryElsewhere elsewhere;
  if (how.elsewhere) {
    elsewhere = [&how, host = winner.cluster->host](const std::vector<std::string>& excluded, const RunExtras& next) {
      return how.elsewhere(host, excluded, next);
    };
  }
  return follow_run(e, winner.cluster->run, std::move(*winner.launched), how.line, winner.smart.workdir,
                    winner.smart.extras, elsewhere);
}

} // namespace rv::app
