// store::BeneathDir: writes below a root never leave it, whatever links are on the way (S1 of the
// third security review: a pull recreated the cluster's links and wrote through them).

#include "core/store/beneath.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <unistd.h>

using namespace rv::store;
namespace fs = std::filesystem;

namespace {

// A fresh directory with `root/` (the destination) and `outside/` (what must stay untouched).
struct Sandbox {
  fs::path base;
  fs::path root;
  fs::path outside;
  explicit Sandbox(const std::string& tag)
  {
    base = fs::temp_directory_path() / ("rv-beneath-" + std::to_string(::getpid()) + "-" + tag);
    fs::remove_all(base);
    root = base / "root";
    outside = base / "outside";
    fs::create_directories(root);
    fs::create_directories(outside);
  }
  ~Sandbox() { fs::remove_all(base); }
  std::size_t outside_count() const
  {
    return static_cast<std::size_t>(std::distance(fs::recursive_directory_iterator(outside), {}));
  }
};

std::string read(const fs::path& p)
{
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A file `name` with `text` in a directory of its own; the directory's descriptor stays open.
struct Source {
  fs::path dir;
  int fd = -1;
  Source(const fs::path& base, const std::string& name, const std::string& text) : dir(base / "src")
  {
    fs::create_directories(dir);
    std::ofstream(dir / name) << text;
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  }
  ~Source() { ::close(fd); }
};

} // namespace

TEST_CASE("beneath: only plain relative paths are accepted")
{
  CHECK(is_plain_relative("a"));
  CHECK(is_plain_relative("a/b/c.txt"));
  CHECK(is_plain_relative("..a/b.."));
  CHECK_FALSE(is_plain_relative(""));
  CHECK_FALSE(is_plain_relative("/etc/passwd"));
  CHECK_FALSE(is_plain_relative(".."));
  CHECK_FALSE(is_plain_relative("../x"));
  CHECK_FALSE(is_plain_relative("a/../../x"));
  CHECK_FALSE(is_plain_relative("./a"));
  CHECK_FALSE(is_plain_relative("a//b"));
  CHECK_FALSE(is_plain_relative("a/"));
  CHECK_FALSE(is_plain_relative("a/."));
}

TEST_CASE("beneath: a link stays inside only when it is relative and never climbs above the root")
{
  CHECK(link_stays_inside("a", "b"));
  CHECK(link_stays_inside("d/a", ".."));     // the root itself
  CHECK(link_stays_inside("d/e/a", "../x")); // d/x
  CHECK(link_stays_inside("a", "./b/../c"));
  CHECK_FALSE(link_stays_inside("a", ".."));        // the root's parent
  CHECK_FALSE(link_stays_inside("d/a", "../.."));   // the root's parent
  CHECK_FALSE(link_stays_inside("a", "b/../../x")); // above on the way
  CHECK_FALSE(link_stays_inside("a", "/home/me/.config"));
  CHECK_FALSE(link_stays_inside("a", ""));
}

TEST_CASE("beneath: a link where a directory belongs is replaced by a directory, nothing is made through it")
{
  Sandbox box("dirs");
  fs::create_directory_symlink(box.outside, box.root / "cfg");
  auto tree = BeneathDir::open(box.root);
  REQUIRE(tree);
  REQUIRE(tree->make_dirs("cfg/autostart"));
  CHECK_FALSE(fs::is_symlink(box.root / "cfg"));
  CHECK(fs::is_directory(box.root / "cfg/autostart"));
  CHECK(tree->links_replaced() == 1);
  CHECK(box.outside_count() == 0);
  // A link deeper down, and a dangling one, the same.
  fs::create_directories(box.root / "a/b");
  fs::create_directory_symlink("../../../outside", box.root / "a/b/c");
  fs::create_symlink(box.base / "nowhere", box.root / "a/d");
  REQUIRE(tree->make_dirs("a/b/c/x"));
  REQUIRE(tree->make_dirs("a/d/y"));
  CHECK(fs::is_directory(box.root / "a/b/c/x"));
  CHECK(fs::is_directory(box.root / "a/d/y"));
  CHECK(tree->links_replaced() == 3);
  CHECK(box.outside_count() == 0);
  CHECK_FALSE(fs::exists(box.base / "nowhere"));
}

TEST_CASE("beneath: paths that would leave the root are refused before anything is made")
{
  Sandbox box("refused");
  auto tree = BeneathDir::open(box.root);
  REQUIRE(tree);
  Source src(box.base, "f", "data");
  for (std::string bad : {"../outside/x", "/tmp/rv-x", "a/../../outside/x", "./x", "a//x"}) {
    CAPTURE(bad);
    auto made = tree->make_dirs(bad);
    REQUIRE_FALSE(made);
    CHECK(made.error().message.find("not a plain relative path") != std::string::npos);
    CHECK_FALSE(tree->move_in(src.fd, "f", bad));
    CHECK_FALSE(tree->make_symlink(bad, "x"));
  }
  CHECK(fs::is_empty(box.root));
  CHECK(box.outside_count() == 0);
  CHECK(fs::exists(src.dir / "f"));
}

TEST_CASE("beneath: a link is made only when it stays inside, a link to a parent is not")
{
  Sandbox box("links");
  auto tree = BeneathDir::open(box.root);
  REQUIRE(tree);
  auto up = tree->make_symlink("up", "..");
  REQUIRE(up);
  CHECK_FALSE(*up);
  CHECK_FALSE(fs::exists(fs::symlink_status(box.root / "up")));
  auto abs = tree->make_symlink("cfg", box.outside.string());
  REQUIRE(abs);
  CHECK_FALSE(*abs);
  CHECK_FALSE(fs::exists(fs::symlink_status(box.root / "cfg")));
  auto inner = tree->make_symlink("d/to-root", "..");
  REQUIRE(inner);
  CHECK(*inner);
  CHECK(fs::read_symlink(box.root / "d/to-root") == "..");
  // Made again over an existing link (a pull repeated): replaced, not an error.
  auto again = tree->make_symlink("d/to-root", "../d");
  REQUIRE(again);
  CHECK(fs::read_symlink(box.root / "d/to-root") == "../d");
}

TEST_CASE("beneath: a file moved in replaces a link at its name and never writes through it")
{
  Sandbox box("files");
  std::ofstream(box.outside / "victim") << "keep me";
  fs::create_symlink(box.outside / "victim", box.root / "out.txt");
  fs::create_directory_symlink(box.outside, box.root / "sub");
  auto tree = BeneathDir::open(box.root);
  REQUIRE(tree);
  {
    Source src(box.base, "f", "pulled 1");
    REQUIRE(tree->move_in(src.fd, "f", "out.txt"));
  }
  CHECK_FALSE(fs::is_symlink(box.root / "out.txt"));
  CHECK(read(box.root / "out.txt") == "pulled 1");
  CHECK(read(box.outside / "victim") == "keep me");
  {
    Source src(box.base, "f", "pulled 2");
    REQUIRE(tree->move_in(src.fd, "f", "sub/victim"));
  }
  CHECK(read(box.root / "sub/victim") == "pulled 2");
  CHECK(read(box.outside / "victim") == "keep me");
  CHECK(box.outside_count() == 1);
}

TEST_CASE("beneath: a file where the cluster has a directory, or a directory where it has a file, is an error")
{
  Sandbox box("conflict");
  std::ofstream(box.root / "a") << "a file";
  fs::create_directories(box.root / "d/inner");
  auto tree = BeneathDir::open(box.root);
  REQUIRE(tree);
  auto dirs = tree->make_dirs("a/b");
  REQUIRE_FALSE(dirs);
  CHECK(dirs.error().message.find("is a file here") != std::string::npos);
  CHECK(read(box.root / "a") == "a file");
  Source src(box.base, "f", "x");
  auto moved = tree->move_in(src.fd, "f", "d");
  REQUIRE_FALSE(moved);
  CHECK(moved.error().message.find("is a directory here") != std::string::npos);
  CHECK(fs::is_directory(box.root / "d/inner"));
}

TEST_CASE("beneath: the staging directory is private and removed with what it holds")
{
  Sandbox box("staging");
  auto tree = BeneathDir::open(box.root);
  REQUIRE(tree);
  fs::path where;
  {
    auto staging = StagingDir::make(*tree);
    REQUIRE(staging);
    where = staging->path_of("x").parent_path();
    CHECK(where.parent_path() == box.root);
    CHECK((fs::status(where).permissions() & fs::perms::all) == fs::perms::owner_all);
    std::ofstream(staging->path_of("left-over")) << "x";
  }
  CHECK_FALSE(fs::exists(where));
  CHECK(fs::is_empty(box.root));
}
