// Snapshots made with hard links stay as they were when the workspace changes afterwards: real
// pushes and snapshots on the local file system (LocalRunner), with both transports.

#include "core/process/local_runner.hpp"
#include "fakes/file_stat.hpp"
#include "fakes/recording_runner.hpp"
#include "sync/files.hpp"
#include "sync/snapshot.hpp"
#include "sync/transfer.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace rv::sync;
namespace fs = std::filesystem;
using rv::test::set_mtime;
using rv::test::stat_of;

TEST_CASE("snapshot: a mode or mtime change pushed to the workspace leaves the hard-link snapshot as it was")
{
  for (std::string transport : {"rsync", "sftp"}) {
    CAPTURE(transport);
    if (transport == "rsync" && !rv::proc::on_path("rsync")) {
      MESSAGE("SKIP: rsync is not installed");
      continue;
    }
    const auto base = fs::temp_directory_path() / ("rv-snap-" + std::to_string(::getpid()) + "-" + transport);
    fs::remove_all(base);
    const auto project = base / "proj";
    const auto ws = base / "ws";
    const auto snaps = base / "snapshots";
    fs::create_directories(project);
    std::ofstream(project / "run.sh") << "echo hi\n";
    std::ofstream(project / "train.py") << "print(1)\n";
    fs::permissions(project / "run.sh", fs::perms(0644));
    set_mtime(project / "run.sh", 1700000000);
    set_mtime(project / "train.py", 1700000000);

    rv::proc::LocalRunner local;
    auto push = [&] {
      auto sel = list_project_files(project, local, SelectOptions{});
      REQUIRE(sel);
      PushOptions o;
      o.transport = *parse_transport(transport);
      auto r = rv::sync::push(local, local, project, *sel, ws.string(), o);
      REQUIRE(r);
      CHECK(to_string(r->transport) == transport);
      return *r;
    };
    push();
    auto snap = make_snapshot(local, ws.string(), snaps.string(), "1700000000-abcd1234");
    REQUIRE(snap);
    const fs::path in_snap = *snap;
    REQUIRE(stat_of(in_snap / "run.sh").inode == stat_of(ws / "run.sh").inode); // hard links

    // Only the mode changes (chmod +x), and only the mtime (touch): same size, same content.
    fs::permissions(project / "run.sh", fs::perms(0755));
    set_mtime(project / "train.py", 1700000500);
    auto second = push();
    CHECK(second.plan.send.size() == 2);

    CHECK(stat_of(ws / "run.sh").mode == 0755);
    CHECK(stat_of(ws / "train.py").mtime == 1700000500);
    CHECK(stat_of(in_snap / "run.sh").mode == 0644);
    CHECK(stat_of(in_snap / "train.py").mtime == 1700000000);
    CHECK(stat_of(in_snap / "run.sh").inode != stat_of(ws / "run.sh").inode);
    std::ifstream in(in_snap / "run.sh");
    std::string line;
    std::getline(in, line);
    CHECK(line == "echo hi");
    fs::remove_all(base);
  }
}

// Issue #38 item 7: the prune's listing, squeue and the new snapshot in one round trip; the old
// snapshot of no live job goes in one more; the live one and the new one stay.
TEST_CASE("snapshot: prune_and_snapshot lists, reads squeue and snapshots in one round trip")
{
  const std::int64_t now = 1'800'000'000;
  const std::string snaps = "/h/.rv/ws/p/_default/snapshots";
  rv::test::RecordingRunner r([&](const rv::proc::Command& c) {
    rv::proc::Outcome o;
    o.exit_code = 0;
    if (c.argv.size() > 3 && c.argv[3] == "rv-snapshots") {
      o.out = "1700000000-aaaaaaaa\n1700000000-bbbbbbbb\n";
    } else if (c.argv.size() > 2 && c.argv[2].find("squeue") != std::string::npos) {
      o.out = "rv:bbbbbbbb|/h\n";
    }
    return o;
  });
  auto made = rv::sync::prune_and_snapshot(r, "/h/.rv/ws/p/_default/code", snaps, "1800000000-cccccccc", now, 3600);
  REQUIRE(made);
  CHECK(made->path == snaps + "/1800000000-cccccccc");
  CHECK(made->pruned.removed == std::vector<std::string>{"1700000000-aaaaaaaa"});
  CHECK(made->pruned.kept_live == std::vector<std::string>{"1700000000-bbbbbbbb"});
  REQUIRE(r.recorded().size() == 4);
  CHECK(r.recorded()[2].argv[3] == "rv-snapshot");
  CHECK(r.recorded()[3].argv[3] == "rv-prune");
  CHECK(r.round_trips() == 2); // the batch, then the removal
}

TEST_CASE("snapshot: prune_and_snapshot fails with the snapshot's error, nothing is pruned without squeue")
{
  rv::test::RecordingRunner r([](const rv::proc::Command& c) {
    rv::proc::Outcome o;
    o.exit_code = 0;
    if (c.argv.size() > 3 && c.argv[3] == "rv-snapshots") {
      o.out = "1700000000-aaaaaaaa\n";
    } else if (c.argv.size() > 2 && c.argv[2].find("squeue") != std::string::npos) {
      o.exit_code = 1; // the controller cannot be reached
    } else if (c.argv.size() > 3 && c.argv[3] == "rv-snapshot") {
      o.exit_code = 1;
      o.err = "cp: No space left on device";
    }
    return o;
  });
  auto made = rv::sync::prune_and_snapshot(r, "/w", "/s", "1800000000-cccccccc", 1'800'000'000, 3600);
  REQUIRE_FALSE(made);
  CHECK(made.error().message.find("cannot snapshot /w") != std::string::npos);
  CHECK(made.error().message.find("No space left") != std::string::npos);
  CHECK(r.recorded().size() == 3); // no removal: squeue did not answer
  CHECK(r.round_trips() == 1);
}
