// `rv logs` on ended requests (#24 items 7 and 12): a job that failed before any poll saw it
// running is found by request id, and its logs lead with the end of its stderr; --node on a
// one-node job says so instead of printing cat's error.

#include "app/manage/manage.hpp"
#include "app/manage/project_sync.hpp"
#include "core/interrupt.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/fake_clock.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <unistd.h>

using namespace rv;
using namespace rv::app;

namespace {

// A login node that holds log files: `cat` and `tail -n` of them stream their content (as the
// real runners do) or fail as cat does.
class LogNode final : public proc::Runner {
public:
  std::map<std::string, std::string> files; // path -> content
  std::vector<std::vector<std::string>> seen;
  // Answers other commands (squeue) first, when set.
  std::function<std::optional<proc::Outcome>(const std::vector<std::string>&)> answer;
  Result<proc::Outcome> run(const proc::Command& c) override
  {
    seen.push_back(c.argv);
    if (answer) {
      if (auto a = answer(c.argv)) {
        return *a;
      }
    }
    proc::Outcome o;
    // `sh -c SCRIPT tail PATH FROM MAX` is read_from_command: bytes FROM.. (1-based), at most MAX
    const bool chunk = c.argv.front() == "sh";
    const auto& path = chunk ? c.argv.at(4) : c.argv.back();
    auto f = files.find(path);
    if (f == files.end()) {
      o.exit_code = 1;
      o.err = fmt::format("{}: {}: No such file or directory\n", c.argv.front(), path);
      return o;
    }
    o.exit_code = 0;
    o.out = f->second;
    if (chunk) {
      const auto from = std::min<std::size_t>(std::stoul(c.argv.at(5)) - 1, o.out.size());
      o.out = o.out.substr(from, std::stoul(c.argv.at(6)));
    }
    if (c.argv.front() == "tail") { // tail -n N -- path: the last N lines
      const auto n = std::stoul(c.argv[2]);
      std::vector<std::string> lines;
      for (std::size_t from = 0; from < o.out.size();) {
        const auto nl = o.out.find('\n', from);
        const auto end = nl == std::string::npos ? o.out.size() : nl + 1;
        lines.push_back(o.out.substr(from, end - from));
        from = end;
      }
      o.out.clear();
      for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
        o.out += lines[i];
      }
    }
    if (c.on_stdout) {
      c.on_stdout(o.out);
    }
    return o;
  }
  std::string where() const override { return "scripted"; }
};

struct World {
  std::filesystem::path dir;
  LogNode cluster, local;
  rv::test::FakeClock clock;
  store::RecordStore requests;
  secrets::Store secrets;
  Settings settings;
  rv::test::CaptureOutput output;
  Env env;
  explicit World(const char* name)
      : dir(std::filesystem::temp_directory_path() / fmt::format("rv-logs-{}-{}", name, ::getpid())),
        requests((std::filesystem::remove_all(dir), dir / "requests")), secrets(dir / "secrets.json"),
        env{cluster, local, clock, requests, secrets, settings, output, false, 0, "/home/alice", dir}
  {}
  ~World() { std::filesystem::remove_all(dir); }

  // Request 8a707129 (uxcrash): s1 (job 477) failed at once, s2 (478) was cancelled by its guard;
  // the reaper named no winner.
  void crashed_request()
  {
    auto rec = request_from_json(
        nlohmann::json{{"id", "8a707129"},
                       {"host", "scripted"},
                       {"name", "uxcrash"},
                       {"state", "failed"},
                       {"created_at", "2026-11-22T05:00:00Z"},
                       {"log_dir", "/home/alice/.rv/logs"},
                       {"jobs",
                        {{{"strategy_id", "s1"}, {"job_id", "477"}, {"state", "FAILED"}, {"node_list", "v100-1"}},
                         {{"strategy_id", "s2"}, {"job_id", "478"}, {"state", "CANCELLED"}}}}});
    REQUIRE(rec);
    REQUIRE(requests.create(rec->id, to_json(*rec)));
    cluster.files["/home/alice/.rv/logs/uxcrash-477.out"] = "starting\n";
    cluster.files["/home/alice/.rv/logs/uxcrash-477.err"] =
        "rv: job 477 won request 8a707129\nTraceback (most recent call last):\n  File \"crash.py\", line 2\n"
        "ValueError: bad lr\nrv: command exited with status 1\n";
  }
};

} // namespace

TEST_CASE("logs: a job that crashed in seconds is found by its request id, its stderr's end first")
{
  World w("crash");
  w.crashed_request();
  auto code = show_logs(w.env, {"8a707129", false, false, -1, -1});
  REQUIRE_MESSAGE(code, code.error().message);
  CHECK(*code == 0);
  CHECK(w.output.stderr_text == "rv: job 477 ended FAILED; the end of its stderr (rv logs --err 8a707129 has all of "
                                "it):\nTraceback (most recent call last):\n  File \"crash.py\", line 2\n"
                                "ValueError: bad lr\nrv: command exited with status 1\nrv: its stdout:\n");
  CHECK(w.output.stdout_text == "starting\n");

  // --err is the whole stderr log, as it is.
  World e("crash-err");
  e.crashed_request();
  REQUIRE(show_logs(e.env, {"8a707129", false, true, -1, -1}));
  CHECK(e.output.stdout_text.starts_with("rv: job 477 won request"));
  CHECK(e.output.stderr_text.empty());
}

TEST_CASE("logs: --node past a job's nodes is a usage error, not cat's message")
{
  World w("node");
  w.crashed_request();
  auto r = show_logs(w.env, {"8a707129", false, false, 5, -1});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::usage);
  CHECK(r.error().message == "--node 5: job 477 ran on 1 node (v100-1)");
  CHECK(r.error().hint == "a one-node job has one log: rv logs 8a707129");
  CHECK(w.cluster.seen.empty());
}

// #24 item 12: `rv sync pull REQUEST` of a request run without -o said "pulled 0 files".
TEST_CASE("sync pull: a request run without -o has no outputs, and says so")
{
  World w("pull");
  auto rec =
      request_from_json(nlohmann::json{{"id", "2267e17d"},
                                       {"host", "scripted"},
                                       {"name", "rv-2267e17d"},
                                       {"state", "done"},
                                       {"winner", "s1"},
                                       {"remote_root", "/home/alice/.rv"},
                                       {"created_at", "2026-11-22T05:00:00Z"},
                                       {"sync", {{"outputs", nlohmann::json::array()}}},
                                       {"jobs", {{{"strategy_id", "s1"}, {"job_id", "45"}, {"state", "COMPLETED"}}}}});
  REQUIRE(rec);
  REQUIRE(w.requests.create(rec->id, to_json(*rec)));
  auto none = pull_source(w.env, "2267e17d");
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "request 2267e17d ran without -o/--output: it has no outputs to pull");
  REQUIRE(w.requests.update(rec->id, [](nlohmann::json& j) { j["sync"]["outputs"] = {"results"}; }));
  auto some = pull_source(w.env, "2267e17d");
  REQUIRE_MESSAGE(some, some.error().message);
  CHECK(*some == "/home/alice/.rv/outputs/rv-2267e17d-45");
}

// UX review 3, N4: `rv sync pull` of a request whose job crashed before any rv saw it running (no
// winner recorded) asks the cluster which job ran, instead of "has no winner yet".
TEST_CASE("sync pull: a request whose job ended before any poll saw it running pulls that job's outputs")
{
  World w("pull-fast");
  auto rec = request_from_json(nlohmann::json{{"id", "3a7e17d0"},
                                              {"host", "scripted"},
                                              {"name", "rv-3a7e17d0"},
                                              {"state", "submitted"},
                                              {"remote_root", "/home/alice/.rv"},
                                              {"created_at", "2026-11-22T05:00:00Z"},
                                              {"sync", {{"outputs", {"results"}}}},
                                              {"jobs",
                                               {{{"strategy_id", "s1"}, {"job_id", "44"}, {"state", "PENDING"}},
                                                {{"strategy_id", "s2"}, {"job_id", "45"}, {"state", "PENDING"}}}}});
  REQUIRE(rec);
  REQUIRE(w.requests.create(rec->id, to_json(*rec)));
  // squeue still lists both: s1 cancelled itself at the gate, s2 ran the command and failed.
  w.cluster.answer = [](const std::vector<std::string>& argv) -> std::optional<proc::Outcome> {
    if (std::find(argv.begin(), argv.end(), "squeue") == argv.end()) {
      return std::nullopt;
    }
    proc::Outcome o;
    o.exit_code = 0;
    o.out = "44|CANCELLED|None|p||1|N/A|N/A|1:00:00|0:00|N/A|rv-3a7e17d0\n"
            "45|FAILED|None|p|v100-1|1|N/A|N/A|1:00:00|0:03|N/A|rv-3a7e17d0\n";
    return o;
  };
  auto got = pull_source(w.env, "3a7e17d0");
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(*got == "/home/alice/.rv/outputs/rv-3a7e17d0-45");
  REQUIRE(w.cluster.seen.size() == 1); // one squeue, nothing else
  CHECK(std::find(w.cluster.seen[0].begin(), w.cluster.seen[0].end(), "squeue") != w.cluster.seen[0].end());
  auto saved = w.requests.read("3a7e17d0");
  REQUIRE(saved);
  CHECK((*saved)["winner"] == "s2");
}

// UX review 3, N11: a request's outputs pulled without LOCAL land in <project>/rv-outputs, which git
// ignores and a push never sends; a remote path still lands in the current directory.
TEST_CASE("sync pull: a request's outputs go to <project>/rv-outputs, git-ignored, a remote path to the cwd")
{
  World w("pull-dest");
  const auto project = w.dir / "proj";
  std::filesystem::create_directories(project / "src");
  std::ofstream(project / "train.py") << "print(1)\n";
  const auto git = [&](const std::string& args) {
    return std::system(("git -C '" + project.string() + "' " + args + " >/dev/null 2>&1").c_str());
  };
  REQUIRE(git("init -q") == 0);
  REQUIRE(git("add -A") == 0);
  REQUIRE(git("-c user.email=t@t -c user.name=t commit -qm init") == 0);
  w.env.cwd = project / "src"; // anywhere in the project

  auto dest = pull_destination(w.env, {"/home/alice/.rv/outputs/rv-1-45", true});
  REQUIRE_MESSAGE(dest, dest.error().message);
  CHECK(*dest == project / "rv-outputs");
  std::ofstream(*dest / "out.txt") << "result\n"; // what a pull wrote
  CHECK(git("diff --quiet") == 0);
  // git status --porcelain is empty: the tree is not dirty
  const auto status = w.dir / "status.txt";
  REQUIRE(std::system(
              ("git -C '" + project.string() + "' status --porcelain >'" + status.string() + "' 2>&1").c_str()) == 0);
  std::ifstream in(status);
  std::string first;
  std::getline(in, first);
  CHECK(first.empty());
  // A second pull keeps the .gitignore as it is.
  std::ofstream(*dest / ".gitignore") << "*\n# mine\n";
  REQUIRE(pull_destination(w.env, {"/x", true}));
  std::ifstream kept(*dest / ".gitignore");
  std::string all((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  CHECK(all == "*\n# mine\n");

  auto here = pull_destination(w.env, {"/scratch/alice/data", false});
  REQUIRE(here);
  CHECK(*here == project / "src");

  // Outside any project, even in the home directory (which a push refuses to send whole).
  const auto plain = w.dir / "home-like";
  std::filesystem::create_directories(plain);
  w.env.cwd = plain;
  w.env.home = plain.string();
  auto home_dest = pull_destination(w.env, {"/x", true});
  REQUIRE_MESSAGE(home_dest, home_dest.error().message);
  CHECK(*home_dest == plain / "rv-outputs");
}

// UX review 3, section 4 item 10: Ctrl-C on `rv logs -f` while every job still pends says the
// request is still pending and how to cancel it (it said only "stopped waiting for request ...").
TEST_CASE("logs -f: Ctrl-C while the request still pends names it pending, and rv stop")
{
  World w("pending-ctrl-c");
  auto rec =
      request_from_json(nlohmann::json{{"id", "5e11d0a2"},
                                       {"host", "scripted"},
                                       {"name", "rv-5e11d0a2"},
                                       {"state", "submitted"},
                                       {"created_at", "2026-11-22T05:00:00Z"},
                                       {"jobs", {{{"strategy_id", "s1"}, {"job_id", "61"}, {"state", "PENDING"}}}}});
  REQUIRE(rec);
  REQUIRE(w.requests.create(rec->id, to_json(*rec)));
  w.cluster.answer = [](const std::vector<std::string>& argv) -> std::optional<proc::Outcome> {
    if (std::find(argv.begin(), argv.end(), "squeue") == argv.end()) {
      return std::nullopt;
    }
    rv::raise_interrupt(2); // Ctrl-C while rv waits for a start
    proc::Outcome o;
    o.exit_code = 0;
    o.out = "61|PENDING|Priority|p||1|N/A|N/A|1:00:00|0:00|N/A|rv-5e11d0a2\n";
    return o;
  };
  auto r = show_logs(w.env, {"5e11d0a2", true, false, -1, -1});
  rv::clear_interrupt();
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::interrupted);
  CHECK(r.error().message == "stopped waiting; request 5e11d0a2 is still pending");
  CHECK(r.error().hint == "`rv logs -f 5e11d0a2` waits again, `rv stop 5e11d0a2` cancels its jobs");
}
