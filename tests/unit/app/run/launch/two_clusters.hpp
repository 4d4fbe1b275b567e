#pragma once
// Two scripted clusters, A and B, sharing one request store: each has its scripted login node
// (unit/app/lifecycle_world.hpp) and its own Env, opened by name as app::Clusters opens them. The
// race across clusters is tested on it (test_cluster_race.cpp, test_across.cpp).

#include "app/clusters.hpp"
#include "app/request/requests.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

namespace rv::test::lifecycle {

// Two clusters, A and B, sharing one store: each has its scripted login node and its own Env.
struct TwoClusters final : Clusters {
  World world{"cluster-race"};
  Cluster b_runner;
  Env b_env{b_runner,     world.local, world.clock, world.requests, world.secrets, world.settings,
            world.output, false,       0,           "/home/alice",  world.dir};
  TwoClusters()
  {
    world.env.destination = "A";
    world.env.clusters = this;
    b_env.destination = "B";
    b_env.clusters = this;
    b_runner.clock = &world.clock; // B's waits on its login node take their time, as A's do
  }
  Result<Env*> open(const std::string& host) override
  {
    if (host == "A") {
      return &world.env;
    }
    if (host == "B") {
      return &b_env;
    }
    return fail(ErrorCode::unreachable, "no such cluster " + host);
  }
  // `rv run` without -f: the member whose background rv was asked for (`rv _settle`).
  Result<void> settle_in_background(const std::string& id) override
  {
    settled_in_background.push_back(id);
    return {};
  }
  std::vector<std::string> settled_in_background;
  Cluster& a() { return world.cluster; }
  Cluster& b() { return b_runner; }

  // Member records a1 (job 101 on A) and b2 (job 7 on B), one race group; `chosen` as given.
  void add_members(const std::string& chosen = "")
  {
    nlohmann::json race = {{"group", "g1"},
                           {"members", {{{"id", "aaaa0001"}, {"host", "A"}}, {{"id", "bbbb0002"}, {"host", "B"}}}},
                           {"chosen", chosen}};
    for (auto [id, host, job] : {std::tuple{"aaaa0001", "A", "101"}, std::tuple{"bbbb0002", "B", "7"}}) {
      RequestRecord r;
      r.id = id;
      r.name = "train";
      r.destination = host;
      r.remote_root = "/home/alice/.rv";
      r.state = RequestState::submitted;
      r.created_at = "2026-11-27T07:00:00Z";
      r.race = race;
      JobRecord j;
      j.strategy_id = "s1";
      j.job_id = job;
      j.state = slurm::JobState::pending;
      r.jobs.push_back(j);
      REQUIRE(world.requests.create(id, to_json(r)));
    }
  }
  RequestRecord read(const std::string& id)
  {
    auto j = world.requests.read(id);
    REQUIRE(j);
    auto r = request_from_json(*j);
    REQUIRE(r);
    return *r;
  }
};

inline bool writes(const std::vector<std::string>& a, const std::string& file)
{
  return a.size() > 2 && a.front() == "sh" && a.back() == file && mentions(a, "/home/alice/.rv/requests/");
}

} // namespace rv::test::lifecycle
