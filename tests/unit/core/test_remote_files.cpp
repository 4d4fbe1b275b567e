// The remote file snippets (core/process/remote_files.hpp), run for real by /bin/sh.

#include "core/process/local_runner.hpp"
#include "core/process/remote_files.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace rv;
using namespace rv::proc;
namespace fs = std::filesystem;

namespace {

// Runs `c` with HOME set, as the login node would.
class HomeRunner final : public Runner {
public:
  explicit HomeRunner(std::string home) : m_home(std::move(home)) {}
  Result<Outcome> run(const Command& c) override
  {
    auto wrapped = c;
    wrapped.argv.insert(wrapped.argv.begin(), {"env", "HOME=" + m_home});
    return m_local.run(wrapped);
  }
  std::string where() const override { return "local"; }

private:
  std::string m_home;
  LocalRunner m_local;
};

fs::path temp_dir(const char* name)
{
  auto d = fs::temp_directory_path() / (std::string("rv-remote-files-") + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

} // namespace

TEST_CASE("remote files: one rule for remote paths: ~, ~/x, /x, x below $HOME, ~user refused")
{
  HomeRunner r("/home/al ice");
  auto got = remote::resolve(r, {"~", "~/.rv", "~/a b/'q'", "/scratch/x", "rel/dir", "$HOME", "`id`"});
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(*got == std::vector<std::string>{"/home/al ice", "/home/al ice/.rv", "/home/al ice/a b/'q'", "/scratch/x",
                                         "/home/al ice/rel/dir", "/home/al ice/$HOME", "/home/al ice/`id`"});
  auto bad = remote::resolve(r, {"~/ok", "~bob/x"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("~user paths are not supported") != std::string::npos);
  HomeRunner nohome("");
  auto relative = remote::resolve(nohome, {"~/x"});
  REQUIRE_FALSE(relative);
  CHECK(relative.error().message.find("$HOME is not set on the login node") != std::string::npos);
  auto absolute = remote::resolve(nohome, {"/abs"}); // needs no $HOME
  REQUIRE(absolute);
  CHECK(absolute->front() == "/abs");
}

TEST_CASE("remote files: resolving() resolves the named arguments there by the same rule, and nothing else")
{
  HomeRunner r("/home/al ice");
  Command c;
  c.argv = {"sh", "-c", "printf '%s\\0' \"$0\" \"$@\"; cat", "~/.rv", "~/.rv", "-c", "~/a b/'q'", "/abs", "x y", ""};
  c.stdin_data = std::string("in\0put", 6);
  auto got = r.run(remote::resolving(c, {"~/.rv", "~/a b/'q'", "/abs"}));
  REQUIRE(got);
  CHECK(got->ok());
  using namespace std::string_literals;
  CHECK(got->out == "/home/al ice/.rv\0/home/al ice/.rv\0-c\0/home/al ice/a b/'q'\0/abs\0x y\0\0in\0put"s);
  // The same paths as resolve() gives: the rule has one home.
  auto direct = remote::resolve(r, {"~/.rv", "~/a b/'q'"});
  REQUIRE(direct);
  CHECK(got->out.starts_with((*direct)[0] + '\0'));
  // Neither the program nor the script of `sh -c SCRIPT` is ever resolved, even when named.
  Command echo;
  echo.argv = {"sh", "-c", "echo ok", "x"};
  auto same = r.run(remote::resolving(echo, {"sh", "echo ok"}));
  REQUIRE(same);
  CHECK(same->out == "ok\n");
  // A path that cannot resolve stops it before the command runs.
  Command touch;
  const auto marker = temp_dir("resolving") / "ran";
  touch.argv = {"sh", "-c", ": >\"$1\"", "x", marker.string(), "~bob/x"};
  auto bad = r.run(remote::resolving(touch, {"~bob/x"}));
  REQUIRE(bad);
  CHECK(bad->exit_code == 1);
  CHECK(bad->err.find("~user paths are not supported") != std::string::npos);
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("remote files: a private file is written atomically, 0600 in a 0700 directory, from stdin")
{
  auto dir = temp_dir("write");
  LocalRunner r;
  const std::string content("KEY='v a l'\n$x `y`\n\x01\xff", 20);
  const auto path = (dir / "requests/abc/env").string();
  auto o = r.run(remote::write_private_command(path, content));
  REQUIRE(o);
  CHECK(o->ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  CHECK(s.str() == content);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat((dir / "requests/abc").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK_FALSE(fs::exists(path + ".tmp"));
  for (const auto& a : remote::write_private_command(path, content).argv) {
    CHECK(a.find("v a l") == std::string::npos); // the content never in argv
  }

  auto whole = r.run(remote::read_command(path));
  REQUIRE(whole);
  CHECK(whole->out == content);
  auto from = r.run(remote::read_from_command(path, 6));
  REQUIRE(from);
  CHECK(from->out == content.substr(6));
  // #17: at most max_bytes per read (a multi-GB log never lands whole in the login node's batch
  // files or in rv's memory); the next read goes on where it stopped; a missing file is an error.
  auto piece = r.run(remote::read_from_command(path, 6, 3));
  REQUIRE(piece);
  CHECK(piece->out == content.substr(6, 3));
  auto next = r.run(remote::read_from_command(path, 9, 3));
  REQUIRE(next);
  CHECK(next->out == content.substr(9, 3));
  auto missing = r.run(remote::read_from_command((dir / "no-such-log").string(), 0));
  REQUIRE(missing);
  CHECK_FALSE(missing->ok());
  CHECK(missing->err.find("No such file") != std::string::npos); // rv logs says "no such file"
  auto last = r.run(remote::last_lines_command(path, 2));
  REQUIRE(last);
  CHECK(last->out == "$x `y`\n\x01");

  auto rm = remote::remove_command({path, (dir / "missing").string()});
  CHECK(rm.uninterruptible);
  auto gone = r.run(rm);
  // A record's ~ path is resolved on the login node.
  std::ofstream(dir / "home-file") << "x";
  HomeRunner at_home(dir.string());
  auto by_tilde = at_home.run(remote::remove_command({"~/home-file"}));
  REQUIRE(by_tilde);
  CHECK(by_tilde->ok());
  CHECK_FALSE(fs::exists(dir / "home-file"));
  REQUIRE(gone);
  CHECK(gone->ok());
  CHECK_FALSE(fs::exists(path));
  fs::remove_all(dir);
}

TEST_CASE("remote: wait_for_growth_command ends once a watched file grows past its size, else after max")
{
  const auto d = temp_dir("wait");
  fs::create_directories(d);
  const auto claim = (d / "claim" / "owner").string();
  const auto log = (d / "out.log").string();
  {
    std::ofstream(log) << "hello\n"; // 6 bytes: what rv has read already
  }
  LocalRunner r;
  using namespace std::chrono;
  auto timed = [&](const Command& c) {
    const auto t0 = steady_clock::now();
    auto o = r.run(c);
    REQUIRE(o);
    CHECK(o->exit_code == 0);
    return duration_cast<milliseconds>(steady_clock::now() - t0);
  };
  // Nothing grows (the claim not written, the log as read): the whole wait, and no longer.
  const auto idle = timed(remote::wait_for_growth_command({{claim, 0}, {log, 6}}, milliseconds(600)));
  CHECK(idle >= milliseconds(550));
  CHECK(idle < milliseconds(5000));
  // A file already past its size ends the wait at once (the log has 6 bytes, rv read 2).
  CHECK(timed(remote::wait_for_growth_command({{claim, 0}, {log, 2}}, seconds(20))) < seconds(10));
  // A claim written during the wait ends it early.
  Command later;
  later.argv = {"sh", "-c", "sleep 0.3; mkdir -p \"$(dirname \"$1\")\"; echo 41 >\"$1\"", "sh", claim};
  later.timeout = seconds(20);
  auto writer = std::async(std::launch::async, [&] { return LocalRunner().run(later); });
  CHECK(timed(remote::wait_for_growth_command({{claim, 0}, {log, 6}}, seconds(20))) < seconds(10));
  REQUIRE(writer.get());
  // A max of 0 looks once and ends.
  CHECK(timed(remote::wait_for_growth_command({{log, 6}}, milliseconds(0))) < seconds(5));
  fs::remove_all(d);
}

// Issue #38 item 7: the first thing a job writes (the claim, its first line) is seen within 0.05 s;
// what that costs the login node is a `sleep` a tick, never another wc or stat.
TEST_CASE("remote: wait_for_growth_command looks at an empty file every 0.05 s with no process, a read one every 0.2 s")
{
  const auto d = temp_dir("looks");
  const auto bin = d / "bin";
  fs::create_directories(bin);
  const auto calls = (d / "calls").string();
  for (const char* tool : {"sleep", "wc"}) { // record each call, then do it
    const auto real = std::string(tool) == "sleep" ? "sleep" : "wc";
    std::ofstream(bin / tool) << "#!/bin/sh\necho \"" << tool << " $*\" >>'" << calls << "'\nPATH=/usr/bin:/bin exec "
                              << real << " \"$@\"\n";
    fs::permissions(bin / tool, fs::perms::owner_all);
  }
  const auto empty = (d / "claim").string(); // not there: size 0
  const auto log = (d / "out.log").string();
  std::ofstream(log) << "hello\n";
  auto wait = remote::wait_for_growth_command({{empty, 0}, {log, 6}}, std::chrono::milliseconds(400));
  wait.argv.insert(wait.argv.begin(), {"env", "PATH=" + bin.string() + ":/usr/bin:/bin"});
  LocalRunner r;
  auto o = r.run(wait);
  REQUIRE(o);
  CHECK(o->exit_code == 0);
  std::ifstream in(calls);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  const auto count = [&](const std::string& l) { return std::count(lines.begin(), lines.end(), l); };
  CHECK(count("sleep 0.05") == 8); // 2 looks of 0.2 s, 4 ticks each
  CHECK(count("wc -c") == 3);      // the read file: at the start and once a look, as before
  CHECK(lines.size() == 11);       // nothing else: the empty file costs no process
}

TEST_CASE("remote: wait_or_sleep waits on the login node, sleeps the rest here only when the wait cannot run")
{
  using std::chrono::milliseconds;
  rv::test::FakeClock clock;
  const auto wait = remote::wait_for_growth_command({{"/x/claim", 0}}, milliseconds(2000));
  auto is_wait = [](const std::vector<std::string>& a) { return a.size() > 3 && a[3] == "rv-wait"; };
  SUBCASE("the wait ran (a claim, or its time): nothing slept here")
  {
    rv::test::FakeRunner runner;
    runner.expect(is_wait, rv::test::FakeRunner::reply(0));
    remote::wait_or_sleep(runner, clock, wait, clock.now() + milliseconds(2000));
    CHECK(runner.all_consumed());
    CHECK(clock.slept_ms() == 0);
  }
  SUBCASE("the wait could not run: the rest of the pause is slept here")
  {
    rv::test::FakeRunner runner; // expects nothing: the run fails as a lost connection would
    const auto until = clock.now() + milliseconds(2000);
    clock.advance(milliseconds(300)); // the failed attempt's own time
    remote::wait_or_sleep(runner, clock, wait, until);
    CHECK(runner.seen().size() == 1);
    CHECK(clock.slept_ms() == 1700);
  }
  SUBCASE("the pause is already over: nothing runs, nothing sleeps")
  {
    rv::test::FakeRunner runner;
    remote::wait_or_sleep(runner, clock, wait, clock.now());
    CHECK(runner.seen().empty());
    CHECK(clock.slept_ms() == 0);
  }
}
