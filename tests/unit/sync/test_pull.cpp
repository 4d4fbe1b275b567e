// rv sync pull stays inside its destination on both transports (S1 of the third security review:
// the cluster's links were recreated locally and the next pull wrote through them). Real pulls on
// the local file system (LocalRunner as the cluster), and a scripted cluster whose listing lies.

#include "core/process/local_runner.hpp"
#include "fakes/fake_runner.hpp"
#include "sync/transfer.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

using namespace rv::sync;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p)
{
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t count_below(const fs::path& dir)
{
  return static_cast<std::size_t>(std::distance(fs::recursive_directory_iterator(dir), {}));
}

bool has(const std::vector<std::string>& v, const std::string& s)
{
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

TEST_CASE("pull: the cluster's links never carry a write outside the destination (rsync and sftp)")
{
  for (std::string transport : {"rsync", "sftp"}) {
    CAPTURE(transport);
    if (transport == "rsync" && !rv::proc::on_path("rsync")) {
      MESSAGE("SKIP: rsync is not installed");
      continue;
    }
    const auto base = fs::temp_directory_path() / ("rv-pull-" + std::to_string(::getpid()) + "-" + transport);
    fs::remove_all(base);
    const auto results = base / "cluster/results"; // the lab's directory on the cluster
    const auto home = base / "home";               // the user's laptop: nothing here may change
    const auto pulled = home / "pulled";
    fs::create_directories(results / "sub");
    fs::create_directories(home / ".config");
    fs::create_directories(pulled);
    std::ofstream(results / "sub/metrics.csv") << "loss,0.1\n";
    fs::create_directory_symlink(home / ".config", results / "cfg"); // absolute, outside
    fs::create_directory_symlink("..", results / "up");              // a link to a parent
    fs::create_directory_symlink("sub", results / "inner");          // stays inside: kept
    fs::create_symlink("../../secret", results / "sub/leak");        // climbs above the root

    rv::proc::LocalRunner local;
    PushOptions o;
    o.transport = *parse_transport(transport);
    auto first = rv::sync::pull(local, local, results.string(), pulled, o);
    REQUIRE(first);
    CHECK(to_string(first->transport) == transport);
    const auto dest = pulled / "results";
    CHECK(first->local_path == dest.string());
    CHECK(read(dest / "sub/metrics.csv") == "loss,0.1\n");
    CHECK(fs::read_symlink(dest / "inner") == "sub");
    for (std::string outside : {"cfg", "up", "sub/leak"}) {
      CAPTURE(outside);
      CHECK_FALSE(fs::exists(fs::symlink_status(dest / outside)));
      CHECK(has(first->skipped_links, outside));
    }
    CHECK(first->skipped_links.size() == 3);

    // The link is there locally all the same (made by an older rv, or by hand); on the cluster a
    // lab-mate swaps it for a directory holding a file meant for the laptop's autostart.
    fs::remove(dest / "cfg");
    fs::create_directory_symlink(home / ".config", dest / "cfg");
    fs::remove(results / "cfg");
    fs::create_directories(results / "cfg/autostart");
    std::ofstream(results / "cfg/autostart/evil.desktop") << "[Desktop Entry]\n";
    // And a file whose local name is a link to a file of the user's.
    std::ofstream(home / ".bashrc") << "# mine\n";
    fs::create_symlink(home / ".bashrc", dest / "notes.txt");
    std::ofstream(results / "notes.txt") << "from the cluster\n";

    auto second = rv::sync::pull(local, local, results.string(), pulled, o);
    REQUIRE(second);
    CHECK(count_below(home / ".config") == 0);
    CHECK_FALSE(fs::exists(home / ".config/autostart"));
    CHECK(read(home / ".bashrc") == "# mine\n");
    CHECK_FALSE(fs::is_symlink(dest / "cfg"));
    CHECK(read(dest / "cfg/autostart/evil.desktop") == "[Desktop Entry]\n");
    CHECK_FALSE(fs::is_symlink(dest / "notes.txt"));
    CHECK(read(dest / "notes.txt") == "from the cluster\n");
    // Nothing of rv's own is left in the destination.
    for (const auto& e : fs::directory_iterator(dest)) {
      CHECK_FALSE(e.path().filename().string().starts_with(".rv-pull-"));
    }
    fs::remove_all(base);
  }
}

TEST_CASE("pull: a listing with an absolute or '..' path is refused whole, before anything is written")
{
  const auto base = fs::temp_directory_path() / ("rv-pull-lie-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "dest");
  // find's record: type, size, mtime, mode, link target, path (NUL-separated).
  auto record = [](char type, const std::string& path, const std::string& link = "") {
    return std::string(1, type) + '\0' + "5" + '\0' + "1700000000.0" + '\0' + "644" + '\0' + link + '\0' + path + '\0';
  };
  for (std::string bad : {"/home/victim/.bashrc", "../../.bashrc", "ok/../../x", "a//b"}) {
    CAPTURE(bad);
    rv::test::FakeRunner cluster;
    cluster.expect_prefix({"sh", "-c"}, rv::test::FakeRunner::reply(0, record('d', "ok") + record('f', bad)));
    cluster.expect_prefix({"sh", "-c", "command -v rsync"}, rv::test::FakeRunner::reply(1));
    rv::proc::LocalRunner local;
    PushOptions o;
    o.transport = Transport::sftp;
    auto got = rv::sync::pull(cluster, local, "/lab/results", base / "dest", o);
    REQUIRE_FALSE(got);
    CHECK(got.error().message.find("would leave the destination") != std::string::npos);
    CHECK(got.error().message.find("nothing was pulled") != std::string::npos);
    CHECK(cluster.all_consumed());
    // The destination's own directory may exist; nothing below it (not even "ok").
    CHECK(count_below(base / "dest") <= 1);
    CHECK_FALSE(fs::exists(base / "dest/results/ok"));
  }
  fs::remove_all(base);
}
