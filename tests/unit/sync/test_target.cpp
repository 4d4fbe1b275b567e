// Where a push may delete (sync/target.hpp): the pure decision, and real pushes with the local
// runner into a fake home directory (the review's reproduction of `rv sync push . '~'`).

#include "core/process/local_runner.hpp"
#include "sync/files.hpp"
#include "sync/target.hpp"
#include "sync/transfer.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

using namespace rv::sync;
namespace fs = std::filesystem;

namespace {

TargetFacts dir_facts(const std::string& physical, bool marked = false)
{
  TargetFacts f;
  f.exists = true;
  f.is_dir = true;
  f.marked = marked;
  f.physical = physical;
  f.resolved = physical;
  f.marker = marked ? marker_text("k", physical) : "";
  f.home = "/home/ana";
  f.home_physical = "/home/ana";
  f.protect_physical = {"/home/ana/.rv/workspaces", "/home/ana/.rv"};
  return f;
}

TargetPolicy policy(bool owned = false, bool allow_delete = false)
{
  TargetPolicy p;
  p.marker_key = "k";
  p.owned = owned;
  p.allow_delete = allow_delete;
  p.protect = {"/home/ana/.rv/workspaces", "/home/ana/.rv"};
  return p;
}

bool refused(const std::string& dir, const TargetFacts& f, const TargetPolicy& p = policy())
{
  return !decide_target(dir, f, p, false).has_value();
}

} // namespace

TEST_CASE("sync target: paths are compared in their normal form")
{
  CHECK(normal_remote_path("/home/ana/.") == "/home/ana");
  CHECK(normal_remote_path("/home/ana/") == "/home/ana");
  CHECK(normal_remote_path("//home//ana/./x/..") == "/home/ana");
  CHECK(normal_remote_path("/..") == "/");
  CHECK(normal_remote_path("/") == "/");
  CHECK(same_or_ancestor("/home", "/home/ana"));
  CHECK(same_or_ancestor("/", "/home/ana"));
  CHECK(same_or_ancestor("/home/ana", "/home/ana"));
  CHECK_FALSE(same_or_ancestor("/home/an", "/home/ana"));
  CHECK_FALSE(same_or_ancestor("/home/ana/x", "/home/ana"));
}

TEST_CASE("sync target: the root, the home directory, rv's directories and their ancestors are refused")
{
  CHECK(refused("/home/ana", dir_facts("/home/ana")));
  CHECK(refused("/home/ana/.", dir_facts("/home/ana")));
  CHECK(refused("/home/ana/", dir_facts("/home/ana")));
  CHECK(refused("/", dir_facts("/")));
  CHECK(refused("/home", dir_facts("/home")));
  CHECK(refused("/home/ana/.rv", dir_facts("/home/ana/.rv")));
  CHECK(refused("/home/ana/.rv/workspaces", dir_facts("/home/ana/.rv/workspaces")));
  // A link that leads to the home directory is refused by its physical path.
  CHECK(refused("/home/ana/link", dir_facts("/home/ana")));
  // Even rv's own workspace policy and --delete cannot lift the refusal.
  CHECK(refused("/home/ana", dir_facts("/home/ana"), policy(true, true)));
  // A directory that does not exist yet is refused by its lexical path alone.
  TargetFacts missing = dir_facts("");
  missing.exists = missing.is_dir = false;
  CHECK(refused("/home/ana/x/..", missing));
  auto err = decide_target("/home/ana", dir_facts("/home/ana"), policy(), false);
  REQUIRE_FALSE(err);
  CHECK(err.error().message == "rv will not push to /home/ana: it is your home directory");
  CHECK_FALSE(err.error().hint.empty());
  auto anc = decide_target("/home", dir_facts("/home"), policy(), false);
  REQUIRE_FALSE(anc);
  CHECK(anc.error().message == "rv will not push to /home: it is an ancestor of your home directory");
  // Below the home directory, and beside rv's directories, is fine.
  CHECK_FALSE(refused("/home/ana/projects/x", dir_facts("/home/ana/projects/x")));
  CHECK_FALSE(refused("/home/ana/.rvx", dir_facts("/home/ana/.rvx")));
}

TEST_CASE("sync target: deletions only in marked, new, empty or rv-owned directories, or with --delete")
{
  const std::string d = "/home/ana/data";
  auto unmarked = decide_target(d, dir_facts(d), policy(), false);
  REQUIRE(unmarked);
  CHECK_FALSE(unmarked->mirror);
  CHECK_FALSE(unmarked->write_marker);
  CHECK(unmarked->note.find("not an rv workspace") != std::string::npos);
  CHECK(unmarked->note.find("--delete") != std::string::npos);

  auto marked = decide_target(d, dir_facts(d, true), policy(), false);
  REQUIRE(marked);
  CHECK(marked->mirror);
  CHECK_FALSE(marked->write_marker);

  auto empty = decide_target(d, dir_facts(d), policy(), true);
  REQUIRE(empty);
  CHECK(empty->mirror);
  CHECK(empty->write_marker);

  TargetFacts missing = dir_facts("");
  missing.exists = missing.is_dir = false;
  missing.resolved = d; // the physical path mkdir -p will give it
  auto fresh = decide_target(d, missing, policy(), true);
  REQUIRE(fresh);
  CHECK(fresh->mirror);
  CHECK(fresh->write_marker);
  CHECK(fresh->marker_text == marker_text("k", d));

  auto owned = decide_target(d, dir_facts(d), policy(true), false);
  REQUIRE(owned);
  CHECK(owned->mirror);
  CHECK(owned->write_marker);

  auto forced = decide_target(d, dir_facts(d), policy(false, true), false);
  REQUIRE(forced);
  CHECK(forced->mirror);
  CHECK(forced->write_marker);

  // A symlinked target is never followed for deletion, marked or forced.
  TargetFacts link = dir_facts("/scratch/ana", true);
  link.is_symlink = true;
  auto via_link = decide_target("/home/ana/scratch", link, policy(true, true), false);
  REQUIRE(via_link);
  CHECK_FALSE(via_link->mirror);
  CHECK(via_link->note.find("symbolic link") != std::string::npos);

  TargetFacts file = dir_facts("/home/ana/notes.txt");
  file.is_dir = false;
  CHECK(refused("/home/ana/notes.txt", file));
}

TEST_CASE("sync target: the facts command's answer parses, and a short answer is an error")
{
  using namespace std::string_literals;
  auto f = parse_target_facts("01110\0"s
                              "/s/ana/ws\0"s
                              "/home/ana\0"s
                              "/s/ana\0"s
                              "/s/ana/ws\0"s
                              "rv workspace\nproof 00\n\0"s
                              "/s/ana/.rv\0"s
                              "\0"s,
                              2);
  REQUIRE(f);
  CHECK_FALSE(f->is_symlink);
  CHECK(f->exists);
  CHECK(f->is_dir);
  CHECK(f->marked);
  CHECK_FALSE(f->shared);
  CHECK(f->physical == "/s/ana/ws");
  CHECK(f->home == "/home/ana");
  CHECK(f->home_physical == "/s/ana");
  CHECK(f->resolved == "/s/ana/ws");
  CHECK(f->marker == "rv workspace\nproof 00\n");
  CHECK(f->protect_physical == std::vector<std::string>{"/s/ana/.rv", ""});
  CHECK_FALSE(parse_target_facts("01110\0"s
                                 "/x\0"s,
                                 0));
  CHECK_FALSE(parse_target_facts("0111\0"s // four flags: an older answer
                                 "\0"s
                                 "/h\0"s
                                 "/h\0"s,
                                 0));
  CHECK_FALSE(parse_target_facts("01x10\0"s
                                 "\0"s
                                 "/h\0"s
                                 "/h\0"s,
                                 0));
}

namespace {

// A fake home directory with what `rv sync push . '~'` used to delete, a project, and a
// scratch directory reached through a symlink; $HOME points at the fake home meanwhile.
struct FakeHome {
  fs::path base;
  fs::path home;
  fs::path project;
  fs::path scratch;
  std::optional<std::string> old_home;
  rv::proc::LocalRunner local;

  FakeHome()
  {
    base = fs::temp_directory_path() / ("rv-target-" + std::to_string(::getpid()));
    fs::remove_all(base);
    home = base / "home";
    project = base / "proj";
    scratch = base / "scratch";
    for (const auto& f :
         {home / ".bashrc", home / ".ssh/authorized_keys", home / ".rv/requests/abcd1234/env",
          home / "data/big/results.csv", scratch / "dataset.bin", project / "train.py", project / "requirements.txt"}) {
      fs::create_directories(f.parent_path());
      std::ofstream(f) << f.filename().string() << "\n";
    }
    fs::create_directory_symlink(scratch, home / "scratch");
    if (const char* h = std::getenv("HOME")) {
      old_home = h;
    }
    ::setenv("HOME", home.c_str(), 1);
  }
  ~FakeHome()
  {
    if (old_home) {
      ::setenv("HOME", old_home->c_str(), 1);
    }
    std::error_code ec;
    fs::remove_all(base, ec);
  }

  rv::Result<PushReport> push(const fs::path& dir, bool allow_delete = false, bool dry_run = false,
                              Transport transport = Transport::automatic)
  {
    auto sel = list_project_files(project, local, SelectOptions{});
    REQUIRE(sel);
    PushOptions o;
    o.transport = transport;
    o.target.marker_key = key;
    o.dry_run = dry_run;
    o.target.allow_delete = allow_delete;
    o.target.protect = {(home / ".rv/workspaces").string(), (home / ".rv").string()};
    return rv::sync::push(local, local, project, *sel, dir.string(), o);
  }

  std::string key = "this user's workspace key";

  bool home_intact() const
  {
    return fs::exists(home / ".bashrc") && fs::exists(home / ".ssh/authorized_keys") &&
           fs::exists(home / ".rv/requests/abcd1234/env") && fs::exists(home / "data/big/results.csv") &&
           !fs::exists(home / "train.py");
  }
};

} // namespace

TEST_CASE("sync target: pushing to the home directory deletes nothing and is refused (real push)")
{
  FakeHome h;
  for (const auto& dir :
       {h.home, h.home / ".", fs::path(h.home.string() + "/"), h.home / ".rv", h.home / ".rv/workspaces", h.base}) {
    CAPTURE(dir.string());
    auto r = h.push(dir);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("rv will not push to") == 0);
    CHECK(h.home_intact());
  }
  // --delete does not lift it.
  CHECK_FALSE(h.push(h.home, true));
  CHECK(h.home_intact());
}

TEST_CASE("sync target: a link on the cluster where the project has a directory is refused, never written through "
          "(real push)")
{
  // Every transport: the inline apply step refused it itself; file by file (SFTP, or plain copies
  // here) wrote through the link.
  for (const auto transport : {Transport::automatic, Transport::sftp, Transport::rsync}) {
    CAPTURE(static_cast<int>(transport));
    FakeHome h;
    fs::create_directories(h.project / "sub");
    std::ofstream(h.project / "sub/model.py") << "m\n";
    fs::create_directories(h.home / "data");
    fs::create_directory_symlink(h.scratch, h.home / "data/sub"); // the job's code, or a lab-mate's
    auto r = h.push(h.home / "data", false, false, transport);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "sub is a file or a symbolic link on the cluster where the project has a directory, and "
                               "rv deletes nothing outside its workspaces");
    CHECK(r.error().hint.find("--delete") != std::string::npos);
    CHECK_FALSE(fs::exists(h.scratch / "model.py")); // nothing written through the link
    CHECK(fs::is_symlink(h.home / "data/sub"));      // and the user's link kept
    // --delete mirrors: the link goes, a directory takes its place, the scratch is untouched.
    auto mirrored = h.push(h.home / "data", true, false, transport);
    REQUIRE(mirrored);
    CHECK_FALSE(fs::is_symlink(h.home / "data/sub"));
    CHECK(fs::is_regular_file(h.home / "data/sub/model.py"));
    CHECK_FALSE(fs::exists(h.scratch / "model.py"));
    CHECK(fs::exists(h.scratch / "dataset.bin"));
  }
}

TEST_CASE("sync target: an unmarked directory keeps its files, --delete mirrors and marks it (real push)")
{
  FakeHome h;
  auto kept = h.push(h.home / "data");
  REQUIRE(kept);
  CHECK_FALSE(kept->mirrored);
  CHECK(fs::exists(h.home / "data/train.py"));
  CHECK(fs::exists(h.home / "data/big/results.csv"));
  CHECK(kept->kept == std::vector<std::string>{"big/results.csv", "big"});
  CHECK_FALSE(fs::exists(h.home / "data" / std::string(k_workspace_marker)));

  auto dry = h.push(h.home / "data", true, true);
  REQUIRE(dry);
  CHECK(dry->mirrored);
  CHECK(dry->plan.remove == std::vector<std::string>{"big/results.csv"});
  CHECK(fs::exists(h.home / "data/big/results.csv"));

  auto mirrored = h.push(h.home / "data", true);
  REQUIRE(mirrored);
  CHECK(mirrored->mirrored);
  CHECK_FALSE(fs::exists(h.home / "data/big"));
  CHECK(fs::is_regular_file(h.home / "data" / std::string(k_workspace_marker)));
  // Marked now: the next push mirrors without --delete, and the marker itself stays.
  std::ofstream(h.home / "data/stale.txt") << "x\n";
  auto again = h.push(h.home / "data");
  REQUIRE(again);
  CHECK(again->mirrored);
  CHECK_FALSE(fs::exists(h.home / "data/stale.txt"));
  CHECK(fs::exists(h.home / "data" / std::string(k_workspace_marker)));
}

TEST_CASE("sync target: a symlinked target receives files but nothing behind the link is deleted (real push)")
{
  FakeHome h;
  auto r = h.push(h.home / "scratch", true);
  REQUIRE(r);
  CHECK_FALSE(r->mirrored);
  CHECK(fs::exists(h.scratch / "train.py"));
  CHECK(fs::exists(h.scratch / "dataset.bin"));
  CHECK(fs::is_symlink(h.home / "scratch"));
}

TEST_CASE("sync target: a new directory is created, marked and mirrored (real push)")
{
  FakeHome h;
  const auto ws = h.home / "projects/x";
  auto first = h.push(ws);
  REQUIRE(first);
  CHECK(first->mirrored);
  CHECK(fs::exists(ws / "train.py"));
  CHECK(fs::exists(ws / std::string(k_workspace_marker)));
  fs::remove(h.project / "requirements.txt");
  auto second = h.push(ws);
  REQUIRE(second);
  CHECK(second->plan.remove == std::vector<std::string>{"requirements.txt"});
  CHECK_FALSE(fs::exists(ws / "requirements.txt"));
  CHECK(h.home_intact());
}

// N4: between the listing and the deletions, a co-user who can write the target could swap a listed
// subdirectory for a symlink and have `rm -f -- sub/x` delete a file of the victim's elsewhere.
TEST_CASE("sync target: a directory others can write is never mirrored into, marked or not (real push)")
{
  FakeHome h;
  const auto shared = h.home / "data";
  REQUIRE(h.push(shared, true)); // mirrored and marked while private
  std::ofstream(shared / "stale.txt") << "x\n";
  fs::permissions(shared, fs::perms::group_write, fs::perm_options::add);
  auto kept = h.push(shared);
  REQUIRE(kept);
  CHECK_FALSE(kept->mirrored);
  CHECK(fs::exists(shared / "stale.txt"));
  CHECK(fs::exists(shared / "train.py"));
  auto refused = h.push(shared, true); // --delete does not lift it
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("others can write there") != std::string::npos);
  CHECK(fs::exists(shared / "stale.txt"));
  fs::permissions(shared, fs::perms::group_write, fs::perm_options::remove);
  auto mirrored = h.push(shared); // private again: mirrored
  REQUIRE(mirrored);
  CHECK(mirrored->mirrored);
  CHECK_FALSE(fs::exists(shared / "stale.txt"));
}

// N7: a custom sync_root outside the 0700 remote_root got 0755 workspaces (code, and a non-git
// project's .env, readable by others).
TEST_CASE("sync target: the project's own workspace is made and kept private (real push)")
{
  FakeHome h;
  auto sel = list_project_files(h.project, h.local, SelectOptions{});
  REQUIRE(sel);
  PushOptions o;
  o.target.owned = true;
  const auto ws = h.base / "sync-root" / "proj" / "main";
  auto mode = [](const fs::path& p) { return fs::status(p).permissions() & fs::perms::all; };
  REQUIRE(rv::sync::push(h.local, h.local, h.project, *sel, ws.string(), o));
  CHECK(mode(ws) == fs::perms(0700));
  CHECK(mode(ws.parent_path()) == fs::perms(0700)); // parents rv made
  CHECK(fs::exists(ws / "train.py"));
  fs::permissions(ws, fs::perms(0755)); // made by an older rv
  REQUIRE(rv::sync::push(h.local, h.local, h.project, *sel, ws.string(), o));
  CHECK(mode(ws) == fs::perms(0700));
}

// N8: only the remote root and its ancestors were refused; its descendants were not, so
// `rv sync push --delete . '~/.rv/requests'` deleted a live request's secrets file and claim (a
// late sibling could then claim the request again: a duplicate run). The cache root was not
// protected at all.
TEST_CASE("sync target: nothing inside rv's remote root or cache root is a push target (real push)")
{
  FakeHome h;
  fs::create_directories(h.base / "cache" / "huggingface");
  std::ofstream(h.base / "cache" / "huggingface" / "token") << "hf_x\n";
  auto sel = list_project_files(h.project, h.local, SelectOptions{});
  REQUIRE(sel);
  auto push = [&](const fs::path& dir, bool allow_delete) {
    PushOptions o;
    o.target.allow_delete = allow_delete;
    o.target.protect = {(h.home / ".rv/workspaces").string()};
    o.target.protect_inside = {(h.home / ".rv").string(), (h.base / "cache").string()};
    return rv::sync::push(h.local, h.local, h.project, *sel, dir.string(), o);
  };
  for (const auto& dir : {h.home / ".rv/requests", h.home / ".rv/requests/abcd1234", h.home / ".rv/logs/new",
                          h.base / "cache", h.base / "cache/huggingface", h.home / "scratch/../.rv/requests"}) {
    for (bool allow_delete : {false, true}) {
      CAPTURE(dir.string());
      CAPTURE(allow_delete);
      auto r = push(dir, allow_delete);
      REQUIRE_FALSE(r);
      CHECK(r.error().message.find("rv will not push to") == 0);
    }
  }
  CHECK(fs::exists(h.home / ".rv/requests/abcd1234/env"));
  CHECK(fs::exists(h.base / "cache/huggingface/token"));
  CHECK_FALSE(fs::exists(h.home / ".rv/requests/train.py"));
  CHECK(push(h.home / "data", false)); // elsewhere: as before
}

// N1 (security review 2, HIGH): a project holding `.rv-workspace` (a copy of a workspace or a
// snapshot) was pushed like any file, marked the target as rv's, and the next push deleted the
// user's other files there.
TEST_CASE("sync target: a project carrying the marker, pushed twice into an unmarked directory, deletes nothing")
{
  FakeHome h;
  std::ofstream(h.project / std::string(k_workspace_marker)) << "rv workspace: copied from a snapshot\n";
  fs::create_directories(h.project / "sub");
  std::ofstream(h.project / "sub" / std::string(k_workspace_marker)) << "x\n";
  auto sel = list_project_files(h.project, h.local, SelectOptions{});
  REQUIRE(sel);
  for (const auto& e : sel->entries) {
    CHECK_FALSE(is_workspace_marker(e.path)); // never selected, at any depth
  }
  for (int i = 0; i < 2; ++i) {
    auto r = h.push(h.home / "data");
    REQUIRE(r);
    CHECK_FALSE(r->mirrored);
    CHECK(fs::exists(h.home / "data/big/results.csv"));
    CHECK(fs::exists(h.home / "data/train.py"));
    CHECK_FALSE(fs::exists(h.home / "data" / std::string(k_workspace_marker)));
  }
  // A caller's own list holding the marker is refused, not sent.
  FileSelection forged = *sel;
  forged.entries.push_back(forged.entries.front());
  forged.entries.back().path = std::string(k_workspace_marker);
  PushOptions o;
  o.target.marker_key = h.key;
  auto r = rv::sync::push(h.local, h.local, h.project, forged, (h.home / "data").string(), o);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("never sent") != std::string::npos);
  CHECK(h.home_intact());
}

TEST_CASE("sync target: only a marker this user's rv wrote for this very directory lets a push delete")
{
  FakeHome h;
  const auto ws = h.home / "projects/x";
  REQUIRE(h.push(ws)); // new: created, mirrored, marked with its proof
  const auto marker = ws / std::string(k_workspace_marker);
  std::ifstream in(marker);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == marker_text(h.key, fs::canonical(ws).string()));
  // The same marker copied into ~/data (cp -r of a workspace on the cluster) proves nothing there.
  fs::copy_file(marker, h.home / "data" / std::string(k_workspace_marker));
  auto copied = h.push(h.home / "data");
  REQUIRE(copied);
  CHECK_FALSE(copied->mirrored);
  CHECK(copied->note.find("did not write") != std::string::npos);
  CHECK(fs::exists(h.home / "data/big/results.csv"));
  // A marker of an older rv (no proof), or one signed with another user's key, proves nothing either.
  for (const std::string& forged : {std::string("rv workspace: rv sync mirrors the project here\n"),
                                    marker_text("someone else's key", fs::canonical(h.home / "data").string())}) {
    std::ofstream(h.home / "data" / std::string(k_workspace_marker)) << forged;
    auto r = h.push(h.home / "data");
    REQUIRE(r);
    CHECK_FALSE(r->mirrored);
    CHECK(fs::exists(h.home / "data/big/results.csv"));
  }
  // Without a key nothing is trusted and nothing is marked; the workspace still mirrors when owned.
  CHECK_FALSE(marker_proves(text, "", fs::canonical(ws).string()));
  CHECK(h.home_intact());
}
