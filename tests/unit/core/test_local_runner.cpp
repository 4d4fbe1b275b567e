#include "core/interrupt.hpp"
#include "core/process/local_runner.hpp"
#include "core/process/shell.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <unistd.h>

using namespace rv;
using namespace rv::proc;
using namespace std::chrono_literals;

namespace {
const std::string k_nasty =
    "a b  'single' \"double\" $HOME `id` $(id) \\ ; | & * ? [x] {a,b} ~ #\nline2\n\tñ 日本 \x01 end";

void write_file(const std::filesystem::path& p, const std::string& text)
{
  std::ofstream(p) << text;
}

std::string read_file(const std::filesystem::path& p)
{
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Command cmd(std::vector<std::string> argv)
{
  Command c;
  c.argv = std::move(argv);
  c.timeout = 10s;
  return c;
}
} // namespace

TEST_CASE("local runner: exit status and separate streams")
{
  LocalRunner r;
  auto o = r.run(cmd({"/bin/sh", "-c", "echo out; echo err >&2; exit 7"}));
  REQUIRE(o);
  CHECK(o->exit_code == 7);
  CHECK(o->out == "out\n");
  CHECK(o->err == "err\n");
  CHECK_FALSE(o->timed_out);
}

TEST_CASE("local runner: arguments arrive byte for byte")
{
  LocalRunner r;
  auto o = r.run(cmd({"printf", "%s", k_nasty}));
  REQUIRE(o);
  CHECK(o->out == k_nasty);
}

TEST_CASE("local runner: a signal is reported as such")
{
  LocalRunner r;
  auto o = r.run(cmd({"/bin/sh", "-c", "kill -TERM $$"}));
  REQUIRE(o);
  CHECK(o->signal == SIGTERM);
  CHECK(o->status() == 128 + SIGTERM);
}

TEST_CASE("local runner: a timeout kills the whole process group")
{
  LocalRunner r;
  auto c = cmd({"/bin/sh", "-c", "sleep 30 & sleep 30; echo never"});
  c.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto o = r.run(c);
  REQUIRE(o);
  CHECK(o->timed_out);
  CHECK(o->out.empty());
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("local runner: large outputs on both streams do not deadlock")
{
  LocalRunner r;
  auto o = r.run(cmd({"/bin/sh", "-c", "head -c 3000000 /dev/zero; head -c 2000000 /dev/zero >&2"}));
  REQUIRE(o);
  CHECK(o->out.size() == 3000000);
  CHECK(o->err.size() == 2000000);
}

TEST_CASE("local runner: large stdin reaches the child")
{
  LocalRunner r;
  auto c = cmd({"wc", "-c"});
  c.stdin_data = std::string(5'000'000, 'x');
  auto o = r.run(c);
  REQUIRE(o);
  CHECK(o->out.find("5000000") != std::string::npos);
}

TEST_CASE("local runner: a missing program is an error with a hint")
{
  LocalRunner r;
  auto o = r.run(cmd({"rv-no-such-program-xyz"}));
  REQUIRE_FALSE(o);
  CHECK(o.error().message.find("rv-no-such-program-xyz") != std::string::npos);
  CHECK_FALSE(o.error().hint.empty());
}

TEST_CASE("local runner: an interrupt kills the child and reports it")
{
  LocalRunner r;
  std::thread t([] {
    std::this_thread::sleep_for(200ms);
    raise_interrupt(SIGINT);
  });
  auto o = r.run(cmd({"sleep", "30"}));
  t.join();
  clear_interrupt();
  REQUIRE_FALSE(o);
  CHECK(o.error().code == ErrorCode::interrupted);
}

TEST_CASE("local runner: streaming sinks see the output")
{
  LocalRunner r;
  std::string seen;
  auto c = cmd({"/bin/sh", "-c", "echo one; echo two"});
  c.on_stdout = [&](std::string_view s) { seen += s; };
  auto o = r.run(c);
  REQUIRE(o);
  CHECK(seen == "one\ntwo\n");
}

TEST_CASE("local runner: no zombies are left behind")
{
  LocalRunner r;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(r.run(cmd({"true"})));
  }
  auto o = r.run(cmd({"/bin/sh", "-c", "ps -o stat= --ppid $PPID | grep -c Z || true"}));
  REQUIRE(o);
  CHECK(o->out == "0\n");
}

TEST_CASE("batch: many commands in one round trip, each with its own outcome")
{
  LocalRunner r;
  std::vector<Command> cmds = {cmd({"printf", "%s", k_nasty}), cmd({"/bin/sh", "-c", "echo e >&2; exit 3"}),
                               cmd({"true"}), cmd({"head", "-c", "100000", "/dev/zero"})};
  cmds[2].stdin_data = "ignored";
  const int before = r.round_trips();
  auto outs = r.run_batch(cmds);
  REQUIRE(outs);
  CHECK(r.round_trips() == before + 1);
  REQUIRE(outs->size() == 4);
  CHECK((*outs)[0].out == k_nasty);
  CHECK((*outs)[0].exit_code == 0);
  CHECK((*outs)[1].exit_code == 3);
  CHECK((*outs)[1].err == "e\n");
  CHECK((*outs)[3].out.size() == 100000);
}

TEST_CASE("batch: concurrent commands overlap, keep their order, and a plain one waits for them")
{
  LocalRunner r;
  // Each concurrent command leaves a marker (d.m.X), waits (up to 20 s, so that a loaded machine
  // cannot make the test flaky) until all three markers exist, counts them, says it counted
  // (d.c.X), waits for the others to have counted, and removes its marker; run one after another,
  // the first would count 1. The plain one after them counts the markers still there (none: it
  // waited) and removes the d.c.X files.
  const std::string dir = "/tmp/rv-test-batch-" + std::to_string(::getpid());
  auto marker = [&dir](const std::string& name) {
    auto c = cmd({"/bin/sh", "-c",
                  "d=$1; m=$2; touch \"$d.m.$m\"; i=0; while [ $i -lt 200 ]; do set -- \"$d\".m.*; [ $# -ge 3 ] && "
                  "break; sleep 0.1; i=$((i+1)); done; set -- \"$d\".m.*; echo $#; touch \"$d.c.$m\"; i=0; "
                  "while [ $i -lt 200 ]; do set -- \"$d\".c.*; [ $# -ge 3 ] && break; sleep 0.1; i=$((i+1)); done; "
                  "rm -f \"$d.m.$m\"; printf %s \"$m\" >&2",
                  "rv", dir, name});
    c.concurrent = true;
    return c;
  };
  auto after = cmd(
      {"/bin/sh", "-c", "d=$1; set -- \"$d\".m.*; [ -e \"$1\" ] && n=$# || n=0; rm -f \"$d\".c.*; echo $n", "rv", dir});
  auto outs = r.run_batch({marker("a"), marker("b"), marker("c"), after});
  REQUIRE(outs);
  REQUIRE(outs->size() == 4);
  CHECK(std::stoi((*outs)[0].out) == 3); // all three ran at the same time
  CHECK((*outs)[0].err == "a");          // frames in the order given
  CHECK((*outs)[1].err == "b");
  CHECK((*outs)[2].err == "c");
  CHECK(std::stoi((*outs)[3].out) == 0);                                  // the plain command ran after all of them
  CHECK(batch_script({cmd({"true"})}).find(" &\n") == std::string::npos); // plain: in order
}

// #12: a discovery-sized batch runs as one group; only past 16 does a group wait for the first.
TEST_CASE("batch: up to 16 concurrent commands start together, the 17th after them")
{
  auto waits = [](std::size_t n) {
    std::vector<proc::Command> cmds;
    for (std::size_t i = 0; i < n; ++i) {
      auto c = cmd({"true"});
      c.concurrent = true;
      cmds.push_back(c);
    }
    auto script = batch_script(cmds);
    std::size_t count = 0;
    for (auto at = script.find("\nwait\n"); at != std::string::npos; at = script.find("\nwait\n", at + 1)) {
      ++count;
    }
    return count;
  };
  CHECK(waits(13) == 1); // discovery: 9 commands, the config stamp, rv's roots, 2 queue reads
  CHECK(waits(16) == 1);
  CHECK(waits(17) == 2);
}

TEST_CASE("batch: stdin data reaches the command exactly")
{
  LocalRunner r;
  auto c = cmd({"cat"});
  c.stdin_data = k_nasty;
  auto outs = r.run_batch({c});
  REQUIRE(outs);
  CHECK((*outs)[0].out == k_nasty);
}

TEST_CASE("batch output parser rejects truncated frames")
{
  CHECK_FALSE(parse_batch_output("", 1));
  CHECK_FALSE(parse_batch_output("RV-BATCH 0 0 10 0\nshort", 1));
  CHECK_FALSE(parse_batch_output("RV-BATCH 1 0 0 0\n", 1));
  auto ok = parse_batch_output("RV-BATCH 0 5 2 1\nabc", 1);
  REQUIRE(ok);
  CHECK((*ok)[0].out == "ab");
  CHECK((*ok)[0].err == "c");
  CHECK((*ok)[0].exit_code == 5);
}

TEST_CASE("batch output parser rejects frame lengths whose sum overflows")
{
  // LLONG_MAX + LLONG_MAX wrapped to -2, passed the bounds check, and substr threw out_of_range.
  auto r = parse_batch_output("RV-BATCH 0 0 9223372036854775807 9223372036854775807\nabc", 1);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::parse);
  CHECK(r.error().message == "batch output has a malformed frame header");
}

TEST_CASE("shell_quote round-trips through sh")
{
  LocalRunner r;
  for (const std::string& w :
       {std::string(""), std::string("plain"), std::string("it's"), k_nasty, std::string("=x"), std::string("-n")}) {
    auto o = r.run(cmd({"/bin/sh", "-c", "printf '%s' " + shell_quote(w)}));
    REQUIRE(o);
    CHECK(o->out == w);
  }
}

// N4: rv on the login node pushed through `<file>.rv-tmp.<pid>`, copied with copy_file (which
// truncates through a symlink) and chmodded by name. A co-user who can write the directory could
// plant that name as a symlink to a file of the victim's and have it overwritten and chmodded.
TEST_CASE("local runner: put_file never writes or chmods through a temp name planted beside the target")
{
  namespace fs = std::filesystem;
  const auto base = fs::temp_directory_path() / ("rv-put-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "shared");
  write_file(base / "victim", "private\n");
  fs::permissions(base / "victim", fs::perms(0600));
  write_file(base / "train.py", "print(1)\n");
  // Every name the old code could use, planted as a symlink to the victim's file.
  const auto target = base / "shared" / "train.py";
  for (const auto& planted : {target.string() + ".rv-tmp", target.string() + ".rv-tmp." + std::to_string(::getpid())}) {
    fs::create_symlink(base / "victim", planted);
  }
  LocalRunner r;
  auto sent = r.put_file((base / "train.py").string(), target.string(), FileMeta{0644, 1700000000});
  REQUIRE(sent);
  CHECK(read_file(base / "victim") == "private\n");
  CHECK((fs::status(base / "victim").permissions() & fs::perms::all) == fs::perms(0600));
  CHECK(read_file(target) == "print(1)\n");
  CHECK((fs::symlink_status(target).permissions() & fs::perms::all) == fs::perms(0644));
  CHECK(fs::is_regular_file(fs::symlink_status(target)));
  // No temp file is left behind: only the target and the two planted links.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(base / "shared")) {
    ++entries;
  }
  CHECK(entries == 3);
  fs::remove_all(base);
}
