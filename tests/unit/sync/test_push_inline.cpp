// A small push's files ride in the apply step's round trip (issue #38 item 7; docs/sync.md, "Small
// pushes"): real pushes on the local file system through a runner that records each round trip,
// and the confinement rules of every push (temp name and rename, no link followed, modes, mtimes,
// deletions) on that path.

#include "core/process/local_runner.hpp"
#include "fakes/file_stat.hpp"
#include "sync/files.hpp"
#include "sync/snapshot.hpp"
#include "sync/transfer.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace rv::sync;
namespace fs = std::filesystem;
using rv::test::set_mtime;
using rv::test::stat_of;

namespace {

// Runs everything on a LocalRunner and records each round trip: one entry per run or run_batch,
// holding its commands. `edit` may change a command before it runs (a stream cut short).
class Recorder final : public rv::proc::Runner {
public:
  rv::Result<rv::proc::Outcome> run(const rv::proc::Command& cmd) override
  {
    auto c = cmd;
    if (edit) {
      edit(c);
    }
    trips.push_back({c});
    ++m_round_trips;
    return m_local.run(c);
  }
  rv::Result<std::vector<rv::proc::Outcome>> run_batch(const std::vector<rv::proc::Command>& cmds) override
  {
    trips.push_back(cmds);
    ++m_round_trips;
    return m_local.run_batch(cmds);
  }
  rv::Result<std::uint64_t> put_file(const std::string& l, const std::string& r, const rv::proc::FileMeta& m) override
  {
    ++sftp_files;
    return m_local.put_file(l, r, m);
  }
  rv::Result<void> put_symlink(const std::string& t, const std::string& r) override
  {
    ++sftp_files;
    return m_local.put_symlink(t, r);
  }
  std::string where() const override { return "recorded local"; }

  std::vector<std::vector<rv::proc::Command>> trips;
  int sftp_files = 0;
  std::function<void(rv::proc::Command&)> edit;

private:
  rv::proc::LocalRunner m_local;
};

// The name a command goes by in a batch: its $0 (`rv-manifest`, `rv-apply`) or its first word.
std::string name_of(const rv::proc::Command& c)
{
  return c.argv.size() > 3 && (c.argv[0] == "sh" || c.argv[0] == "bash") && c.argv[1] == "-c" ? c.argv[3]
                                                                                              : c.argv.at(0);
}

std::string read_all(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, const std::string& content)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

// The temp names a push leaves behind below `dir` (none, when it worked or failed cleanly).
std::vector<std::string> leftovers(const fs::path& dir)
{
  std::vector<std::string> found;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename().string().find(".rv-tmp.") != std::string::npos) {
      found.push_back(it->path().string());
    }
  }
  return found;
}

struct Tree {
  fs::path base, project, ws;
  rv::proc::LocalRunner git;
  Tree()
  {
    base = fs::temp_directory_path() / ("rv-inline-" + std::to_string(::getpid()));
    fs::remove_all(base);
    project = base / "proj";
    ws = base / "ws";
    fs::create_directories(project);
  }
  ~Tree()
  {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
  rv::Result<PushReport> push(Recorder& remote, Recorder& local, bool owned = true, Transport t = Transport::automatic)
  {
    auto sel = list_project_files(project, git, SelectOptions{});
    REQUIRE(sel);
    PushOptions o;
    o.transport = t;
    o.target.owned = owned;
    o.target.marker_key = "key";
    return rv::sync::push(remote, local, project, *sel, ws.string(), o);
  }
};

} // namespace

TEST_CASE("push inline: a small push's files ride in the apply: two round trips, nothing else")
{
  Tree t;
  std::string binary;
  for (int i = 0; i < 256; ++i) {
    binary.push_back(static_cast<char>(i)); // every byte, NUL included
  }
  write(t.project / "train.py", "print('hi')\n");
  write(t.project / "run.sh", "#!/bin/sh\necho run\n");
  write(t.project / "data" / "blob.bin", binary);
  write(t.project / "a b" / "-it's.py", "x = 1\n"); // blanks, a quote, a leading dash
  write(t.project / "empty.txt", "");
  fs::create_symlink("train.py", t.project / "link.py");
  fs::permissions(t.project / "run.sh", fs::perms(0755));
  set_mtime(t.project / "train.py", 1700000000);
  set_mtime(t.project / "run.sh", 1700000123);

  Recorder remote, local;
  auto r = t.push(remote, local);
  REQUIRE(r);
  CHECK(r->transport == Transport::inline_files);
  CHECK(to_string(r->transport) == "inline");
  CHECK(r->plan.send.size() == 6);
  // Round trip 1: the listing; round trip 2: the apply, with the files on its stdin. No rsync, no SFTP.
  REQUIRE(remote.trips.size() == 2);
  REQUIRE(remote.trips[0].size() == 4);
  CHECK(name_of(remote.trips[0][0]) == "rv-manifest");
  REQUIRE(remote.trips[1].size() == 1);
  const auto& apply = remote.trips[1][0];
  CHECK(name_of(apply) == "rv-apply");
  REQUIRE(apply.stdin_data);
  CHECK(apply.stdin_data->find(std::string("Ftrain.py\0", 10)) != std::string::npos);
  CHECK(apply.stdin_data->find(std::string("Llink.py\0train.py\0", 18)) != std::string::npos);
  CHECK(apply.stdin_data->find("print(") == std::string::npos); // the content is base64, not raw
  CHECK(local.trips.empty());
  CHECK(remote.sftp_files == 0);

  CHECK(read_all(t.ws / "train.py") == "print('hi')\n");
  CHECK(read_all(t.ws / "data" / "blob.bin") == binary);
  CHECK(read_all(t.ws / "a b" / "-it's.py") == "x = 1\n");
  CHECK(fs::exists(t.ws / "empty.txt"));
  CHECK(fs::file_size(t.ws / "empty.txt") == 0);
  CHECK(fs::read_symlink(t.ws / "link.py") == "train.py");
  CHECK(stat_of(t.ws / "run.sh").mode == 0755);
  CHECK(stat_of(t.ws / "train.py").mode == (stat_of(t.project / "train.py").mode));
  CHECK(stat_of(t.ws / "train.py").mtime == 1700000000);
  CHECK(stat_of(t.ws / "run.sh").mtime == 1700000123);
  CHECK(stat_of(t.ws).mode == 0700); // the workspace is private, as before
  CHECK(leftovers(t.ws).empty());

  // Nothing changed: the listing alone, and the apply with no files.
  Recorder again_remote, again_local;
  auto again = t.push(again_remote, again_local);
  REQUIRE(again);
  CHECK(again->plan.send.empty());
  CHECK(again->plan.unchanged == 6);
  CHECK(again_remote.trips.size() == 2);

  // A changed file is a new inode (a snapshot's hard link keeps the old content); a deleted one goes.
  auto snap = make_snapshot(again_remote, t.ws.string(), (t.base / "snaps").string(), "1700000000-abcd1234");
  REQUIRE(snap);
  write(t.project / "train.py", "print('changed')\n");
  fs::remove(t.project / "empty.txt");
  Recorder third_remote, third_local;
  auto third = t.push(third_remote, third_local);
  REQUIRE(third);
  CHECK(third->transport == Transport::inline_files);
  CHECK(third_remote.trips.size() == 2);
  CHECK(read_all(t.ws / "train.py") == "print('changed')\n");
  CHECK(read_all(fs::path(*snap) / "train.py") == "print('hi')\n");
  CHECK_FALSE(fs::exists(t.ws / "empty.txt"));
  CHECK(fs::exists(fs::path(*snap) / "empty.txt"));
}

TEST_CASE("push inline: only `auto`, only with base64 and mktemp there, only within the bounds")
{
  TransferPlan plan;
  plan.send.resize(k_inline_max_files);
  plan.send_bytes = k_inline_max_bytes;
  CHECK(sends_inline(Transport::automatic, true, plan));
  CHECK_FALSE(sends_inline(Transport::rsync, true, plan));
  CHECK_FALSE(sends_inline(Transport::sftp, true, plan));
  CHECK_FALSE(sends_inline(Transport::automatic, false, plan));
  plan.send_bytes = k_inline_max_bytes + 1;
  CHECK_FALSE(sends_inline(Transport::automatic, true, plan));
  plan.send_bytes = 10;
  plan.send.resize(k_inline_max_files + 1);
  CHECK_FALSE(sends_inline(Transport::automatic, true, plan));
  plan.send.clear();
  CHECK_FALSE(sends_inline(Transport::automatic, true, plan)); // nothing to send: no files section
  // "inline" is what a report says, never a setting.
  CHECK_FALSE(parse_transport("inline"));
}

TEST_CASE("push inline: past the bound the files go by rsync or SFTP, outside the apply")
{
  Tree t;
  for (std::size_t i = 0; i <= k_inline_max_files; ++i) {
    write(t.project / ("f" + std::to_string(i) + ".py"), "x\n");
  }
  Recorder remote, local;
  auto r = t.push(remote, local);
  REQUIRE(r);
  CHECK(r->transport != Transport::inline_files);
  REQUIRE(remote.trips.size() >= 2);
  REQUIRE(remote.trips[1].size() == 1);
  const auto& records = *remote.trips[1][0].stdin_data;
  CHECK(records.find(std::string("\0F", 2)) == std::string::npos);
  CHECK(records.find(std::string("\0E", 2)) == std::string::npos);
  if (r->transport == Transport::rsync) {
    REQUIRE(local.trips.size() == 1);
    CHECK(local.trips[0][0].argv[0] == "rsync");
  } else {
    CHECK(remote.sftp_files == static_cast<int>(k_inline_max_files + 1));
  }
  CHECK(read_all(t.ws / "f16.py") == "x\n");
}

TEST_CASE("push inline: never writes through a link on the cluster, on the way or at the name")
{
  Tree t;
  const auto elsewhere = t.base / "elsewhere";
  write(elsewhere / "victim.txt", "mine\n");
  // A directory rv does not own (kept, not mirrored): a link where the project has a directory,
  // and a link at a file's own name.
  write(t.ws / "notes.txt", "the user's\n");
  fs::create_directory_symlink(elsewhere, t.ws / "sub");
  fs::create_symlink(elsewhere / "victim.txt", t.ws / "train.py");
  write(t.project / "train.py", "print(1)\n");
  write(t.project / "sub" / "x.py", "x\n");

  Recorder remote, local;
  auto r = t.push(remote, local, false);
  REQUIRE_FALSE(r);
  // Refused by the plan, before any transport (sync/transfer.cpp, keep_remote_files); the apply
  // step's own check (exit 4) stays behind it.
  CHECK(r.error().message == "sub is a file or a symbolic link on the cluster where the project has a directory, and "
                             "rv deletes nothing outside its workspaces");
  CHECK(remote.trips.size() == 2); // a directory the user names: its facts, then the listing; no apply
  CHECK_FALSE(fs::exists(elsewhere / "x.py"));
  CHECK(read_all(elsewhere / "victim.txt") == "mine\n");
  CHECK(fs::is_symlink(t.ws / "train.py")); // nothing was written: the check comes first
  CHECK(leftovers(t.ws).empty());

  // Without the link on the way, the link at the file's name is replaced, not written through.
  fs::remove(t.ws / "sub");
  Recorder second_remote, second_local;
  auto second = t.push(second_remote, second_local, false);
  REQUIRE(second);
  CHECK(second->transport == Transport::inline_files);
  CHECK_FALSE(fs::is_symlink(t.ws / "train.py"));
  CHECK(read_all(t.ws / "train.py") == "print(1)\n");
  CHECK(read_all(elsewhere / "victim.txt") == "mine\n");
  CHECK(read_all(t.ws / "notes.txt") == "the user's\n"); // kept: not rv's directory
  CHECK(leftovers(t.ws).empty());
}

TEST_CASE("push inline: in rv's own workspace a link on the way is deleted first, as rsync's path does")
{
  Tree t;
  const auto elsewhere = t.base / "elsewhere";
  write(elsewhere / "keep.txt", "mine\n");
  write(t.project / "sub" / "x.py", "x\n");
  Recorder first_remote, first_local;
  REQUIRE(t.push(first_remote, first_local));
  fs::remove_all(t.ws / "sub");
  fs::create_directory_symlink(elsewhere, t.ws / "sub");
  Recorder remote, local;
  auto r = t.push(remote, local);
  REQUIRE(r);
  CHECK(remote.trips.size() == 2);
  CHECK_FALSE(fs::is_symlink(t.ws / "sub"));
  CHECK(read_all(t.ws / "sub" / "x.py") == "x\n");
  CHECK_FALSE(fs::exists(elsewhere / "x.py"));
  CHECK(read_all(elsewhere / "keep.txt") == "mine\n");
}

TEST_CASE("push inline: a stream cut short or damaged changes no file and leaves no temp name")
{
  Tree t;
  write(t.project / "a.py", "old a\n");
  write(t.project / "b.py", "old b\n");
  Recorder first_remote, first_local;
  REQUIRE(t.push(first_remote, first_local));
  write(t.project / "a.py", "new a, longer\n");
  write(t.project / "b.py", "new b, longer\n");
  for (std::string how : {"short", "damaged", "no end"}) {
    CAPTURE(how);
    Recorder remote, local;
    remote.edit = [how](rv::proc::Command& c) {
      if (!c.stdin_data) {
        return;
      }
      auto& in = *c.stdin_data;
      if (how == "short") {
        in.resize(in.size() - 4);
      } else if (how == "damaged") {
        in.back() = '*';
      } else {
        in.resize(in.find(std::string("\0E", 2)) + 1);
      }
    };
    auto r = t.push(remote, local);
    REQUIRE_FALSE(r);
    CHECK(read_all(t.ws / "a.py") == "old a\n");
    CHECK(read_all(t.ws / "b.py") == "old b\n");
    CHECK(leftovers(t.ws).empty());
  }
  Recorder remote, local;
  REQUIRE(t.push(remote, local));
  CHECK(read_all(t.ws / "a.py") == "new a, longer\n");
}
