// Project identity, branch names and the remote layout; snapshot names and pruning.

#include "sync/project.hpp"
#include "sync/snapshot.hpp"

#include <doctest/doctest.h>

using namespace rv::sync;

TEST_CASE("sync: two projects with the same folder name get different identities")
{
  auto a = project_id("/home/ana/work/exp");
  auto b = project_id("/home/ana/old/exp");
  CHECK(a != b);
  CHECK(a.starts_with("exp-"));
  CHECK(a.size() == 4 + 12);
  CHECK(project_id("/home/ana/work/exp/") == project_id("/home/ana/work/exp/."));
  CHECK(project_id("/tmp/we ird$name").starts_with("we_ird_name-"));
  CHECK(project_id("/tmp/.hidden").starts_with("hidden-"));
}

TEST_CASE("sync: branch names become one safe path component")
{
  CHECK(safe_branch("main") == "main");
  CHECK(safe_branch("feature/x") == "feature--x");
  CHECK(safe_branch("a b:c") == "a-b-c");
  CHECK(safe_branch("") == "_default");
  CHECK(safe_branch("--weird--") == "weird");
  CHECK(safe_branch("../../etc") == "etc"); // never `..` or a hidden name
  CHECK(safe_branch("a/../b") == "a--..--b");
  CHECK(safe_branch(std::string(200, 'x')).size() == 80);
}

TEST_CASE("sync: remote layout per project and branch")
{
  auto l = remote_layout("/home/u/.rv/workspaces/", "exp-0123456789ab", "feature/x");
  CHECK(l.project_dir == "/home/u/.rv/workspaces/exp-0123456789ab");
  CHECK(l.branch_dir == "/home/u/.rv/workspaces/exp-0123456789ab/feature--x");
  CHECK(l.workspace == l.branch_dir + "/code");
  CHECK(l.snapshots == l.branch_dir + "/snapshots");
  CHECK(l.venv == l.branch_dir + "/venv");
  CHECK(remote_layout("/s", "p", "").branch_dir == "/s/p/_default");
  CHECK(remote_join("/a/b", ".") == "/a/b");
  CHECK(remote_join("/a/b", "") == "/a/b");
  CHECK(remote_join("/a/b", "src/x") == "/a/b/src/x");
}

TEST_CASE("sync: snapshot names carry their creation time and request id")
{
  CHECK(snapshot_name(1700000000, "3f9c02ab") == "1700000000-3f9c02ab");
  auto p = parse_snapshot_name("1700000000-3f9c02ab");
  REQUIRE(p);
  CHECK(p->first == 1700000000);
  CHECK(p->second == "3f9c02ab");
  CHECK_FALSE(parse_snapshot_name("notes"));
  CHECK_FALSE(parse_snapshot_name("12x-ab"));
  CHECK_FALSE(parse_snapshot_name(".1700-ab.tmp"));
}

TEST_CASE("sync: pruning removes old snapshots but never a queued or running job's")
{
  const std::int64_t now = 1'700'000'000;
  const std::int64_t day = 86400;
  auto live = live_request_ids("rv:aaaa1111\n(null)\nrv:bbbb2222\nsomething else\n");
  CHECK(live == std::set<std::string>{"aaaa1111", "bbbb2222"});
  std::vector<std::string> names = {
      snapshot_name(now - 10 * day, "aaaa1111"), // old, job still queued: kept
      snapshot_name(now - 10 * day, "cccc3333"), // old, job gone: pruned
      snapshot_name(now - 1 * day, "dddd4444"),  // young: kept
      "README",                                  // not a snapshot: never touched
  };
  CHECK(snapshots_to_prune(names, now, 7 * day, live) == std::vector<std::string>{names[1]});
  CHECK(snapshots_to_prune(names, now, 30 * day, live).empty());

  // #15 defect 9: a hardware retry is a new request (eeee5555) running in the first request's
  // snapshot (cccc3333, whose own jobs are gone): its working directory keeps the snapshot.
  const std::string dir = "/home/u/.rv/workspaces/p-1/main/snapshots";
  auto jobs = live_jobs("rv:eeee5555|" + dir + "/" + names[1] + "/src\n(null)|/home/u\n", dir);
  CHECK(jobs.request_ids == std::set<std::string>{"eeee5555"});
  CHECK(jobs.snapshots == std::set<std::string>{names[1]});
  // aaaa1111 has no live job here: pruned; cccc3333 is kept by the retry running in it.
  CHECK(snapshots_to_prune(names, now, 7 * day, jobs.request_ids, jobs.snapshots) ==
        std::vector<std::string>{names[0]});
  CHECK(live_request_ids("rv:aaaa1111|/x\n") == std::set<std::string>{"aaaa1111"});
}
