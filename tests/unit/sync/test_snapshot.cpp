// Snapshots made with hard links stay as they were when the workspace changes afterwards: real
// pushes and snapshots on the local file system (LocalRunner), with both transports.

#include "core/process/local_runner.hpp"
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

namespace {

struct Stat {
  unsigned mode = 0;
  long long mtime = 0;
  ino_t inode = 0;
};

Stat stat_of(const fs::path& p)
{
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return Stat{static_cast<unsigned>(st.st_mode & 07777), static_cast<long long>(st.st_mtime), st.st_ino};
}

void set_mtime(const fs::path& p, long long secs)
{
  timespec times[2] = {{secs, 0}, {secs, 0}};
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
}

} // namespace

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
