#include "app/run/launch/across.hpp"

#include "app/clusters.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "app/run/launch/launch.hpp"
#include "core/interrupt.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/record_store.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>

namespace rv::app {
namespace {

// One cluster of the race: its plan, its smart execution, and once submitted its member request.
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

// Each cluster with a strategy, in the order the hosts were named.
Result<std::vector<Member>> members_of(const AcrossPlan& plans)
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
  return members;
}

// Smart execution (how.prepare) on every member's cluster at once, each member getting its request
// id: a cluster whose preparation failed is left out. The user's own mistake (a usage error) is
// the same on every cluster, and an interrupt ends it all: both fail the whole.
Result<std::vector<Member>> prepare_members(Env& env, std::vector<Member> members, const AcrossLaunch& how)
{
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
        return std::unexpected(smart.error());
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
  if (ready.empty()) {
    return fail(ErrorCode::generic, "no cluster could be prepared for the request (the reasons are above)");
  }
  return ready;
}

// The race group every member records as "race" (docs/multi-cluster.md): its id, the members in
// rank order, no choice yet.
nlohmann::json race_record(const std::vector<Member>& members)
{
  nlohmann::json race = {{"group", store::new_request_id()}, {"members", nlohmann::json::array()}, {"chosen", ""}};
  for (const auto& m : members) {
    race["members"].push_back({{"id", m.smart.extras.request_id}, {"host", m.cluster->host}});
  }
  return race;
}

// Submits every member as a request of the race group, its jobs gated (each waits for rv's
// choice). A cluster that refuses is left out and the others race; an interrupt cancels what was
// submitted. The members submitted; fails when none was.
Result<std::vector<Member>> submit_members(Env& env, std::vector<Member> members, const nlohmann::json& race,
                                           const AcrossLaunch& how)
{
  for (auto& m : members) {
    auto& extras = m.smart.extras;
    extras.gate_wait_s = env.settings.race_gate_wait_s;
    extras.race = race;
    extras.followed = how.mode != AcrossMode::submit;
    if (!how.refanout.is_null()) {
      extras.refanout = how.refanout;
    }
    auto launched = how.mode == AcrossMode::up
                        ? submit_up(*m.cluster->env, m.cluster->run, how.line, m.smart.workdir, extras)
                        : submit_request(*m.cluster->env, m.cluster->run, how.line, m.smart.workdir, "run", extras);
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
  std::vector<Member> submitted;
  for (auto& m : members) {
    if (m.launched) {
      submitted.push_back(std::move(m));
    }
  }
  if (submitted.empty()) {
    return fail(ErrorCode::slurm_rejected, "no cluster took the request (the reasons are above)");
  }
  return submitted;
}

// `rv run` without -f: the jobs wait at their gates and a background rv (`rv _settle`) chooses;
// prints the race and how to follow it.
int hand_over(Env& env, std::vector<Member>& members, const nlohmann::json& race)
{
  const std::string group = race["group"];
  const std::string first_id = members.front().launched->rec.id;
  auto bg = env.clusters ? env.clusters->settle_in_background(first_id)
                         : Result<void>(fail(ErrorCode::generic, "no background rv"));
  for (auto& m : members) {
    m.launched->release();
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

// The foreground race (`rv run -f`, `rv up`): the settle loop until a member is chosen (its index).
// A Ctrl-C cancels every member; every job ended before a start ends every member failed; every
// login failed leaves the jobs at their gates for `rv ps`.
Result<std::size_t> race_members(Env& env, std::vector<Member>& members, const std::string& group)
{
  std::vector<RaceMember> racing;
  for (const auto& m : members) {
    racing.push_back({m.launched->rec, m.cluster->env});
  }
  spdlog::info("race {} across {}", group, members_text(members));
  const auto settled = settle_members(env, racing);
  switch (settled.end) {
  case SettleEnd::chosen:
    return settled.chosen;
  case SettleEnd::interrupted:
    end_all(members, RequestState::cancelled);
    return fail(ErrorCode::interrupted, fmt::format("interrupted: cancelled every job of race {}", group));
  case SettleEnd::over:
    for (auto& m : members) {
      m.launched->finish(RequestState::failed);
    }
    return fail(ErrorCode::slurm_rejected,
                fmt::format("every job of race {} ended before any started (rv ps shows their states)", group));
  case SettleEnd::logins_failed:
    break;
  }
  for (auto& m : members) {
    m.launched->release();
  }
  return fail(ErrorCode::auth_failed,
              fmt::format("race {}: every cluster's login failed {} times in a row; its jobs wait at their gates",
                          group, LoginBackoff::k_max),
              fmt::format("rv ps settles the race once a login works; rv stop {} cancels it",
                          members.front().launched->rec.id));
}

// The losers once a member is chosen: settle_step ended their jobs (their stored records
// cancelled), which this closes, removing their secrets; a member whose cluster could not be
// reached stays live, for `rv ps` to stop later.
void close_losers(Env& env, std::vector<Member>& members, std::size_t winner)
{
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i == winner) {
      continue;
    }
    auto& launched = *members[i].launched;
    auto stored = env.requests.read(launched.rec.id);
    auto rec = stored ? request_from_json(*stored) : Result<RequestRecord>(std::unexpected(stored.error()));
    if (rec && is_final_state(rec->state)) {
      launched.finish(rec->state);
    } else {
      launched.release();
    }
  }
}

// The chosen member goes on as on one cluster: rv up attaches; rv run -f follows it (its own
// cluster's race, the logs, a re-fan-out that races every cluster again through how.elsewhere).
Result<int> go_on(Member& winner, const AcrossLaunch& how)
{
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

} // namespace

Result<int> launch_across(Env& env, const AcrossPlan& plans, const AcrossLaunch& how)
{
  RV_TRY(found, members_of(plans));
  RV_TRY(ready, prepare_members(env, std::move(found), how));
  const auto race = race_record(ready);
  RV_TRY(members, submit_members(env, std::move(ready), race, how));
  if (how.mode == AcrossMode::submit) {
    return hand_over(env, members, race);
  }
  const std::string group = race["group"];
  RV_TRY(chosen, race_members(env, members, group));
  close_losers(env, members, chosen);
  const auto& winner = members[chosen];
  spdlog::info("race {}: a job on {} (cluster {}) started first: request {} runs there; the other clusters' jobs "
               "are cancelled",
               group, winner.cluster->host, winner.cluster->run.cluster.config.cluster_name, winner.launched->rec.id);
  return go_on(members[chosen], how);
}

} // namespace rv::app
