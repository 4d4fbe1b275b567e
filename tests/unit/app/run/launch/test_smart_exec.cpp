// The project root a command runs from: the git root or marker above the current directory,
// never the home directory, never a project the current directory is not in.

#include "app/run/launch/smart_exec.hpp"
#include "core/process/local_runner.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/recording_runner.hpp"
#include "sync/command.hpp"
#include "sync/snapshot.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <unistd.h>

namespace fs = std::filesystem;
using rv::app::project_root_for;

TEST_CASE("app: smart execution picks the project root holding the current directory")
{
  char tmpl[] = "/tmp/rv-smart-test.XXXXXX";
  const fs::path base = ::mkdtemp(tmpl);
  fs::create_directories(base / "repo/.git");
  fs::create_directories(base / "repo/src/deep");
  fs::create_directories(base / "other/pkg");
  std::ofstream(base / "repo/src/train.py") << "x";
  std::ofstream(base / "other/pyproject.toml") << "[project]\n";
  std::ofstream(base / "other/pkg/run.py") << "x";

  auto r = project_root_for(base / "repo/src/deep", "../train.py", "/nonexistent-home");
  REQUIRE(r);
  CHECK(*r == base / "repo");
  auto p = project_root_for(base / "other/pkg", "run.py", "/nonexistent-home");
  REQUIRE(p);
  CHECK(*p == base / "other");
  // A script in another project than the current directory's: an error with a hint.
  auto outside = project_root_for(base / "repo/src", "../../other/pkg/run.py", "/nonexistent-home");
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message.find("outside the project") != std::string::npos);
  // No marker: the current directory itself.
  fs::create_directories(base / "plain");
  auto plain = project_root_for(base / "plain", "", "/nonexistent-home");
  REQUIRE(plain);
  CHECK(*plain == base / "plain");
  // Never the home directory (the Env's, not $HOME: the core reads no environment).
  auto home = project_root_for(base / "plain", "", (base / "plain").string());
  REQUIRE_FALSE(home);
  CHECK(home.error().hint.find("--no-sync") != std::string::npos);
  fs::remove_all(base);
}

TEST_CASE("app: a launcher naming a script that is not here is refused before the queue, with a did-you-mean")
{
  char tmpl[] = "/tmp/rv-entry-test.XXXXXX";
  const fs::path base = ::mkdtemp(tmpl);
  fs::create_directories(base / "scripts");
  std::ofstream(base / "train.py") << "x";
  std::ofstream(base / "scripts/eval.py") << "x";
  auto check = [&](std::vector<std::string> cmd) {
    auto a = rv::sync::analyze_command(cmd, [&](const std::string& p) { return fs::exists(base / p); });
    return rv::app::check_entry_exists(cmd, a, base);
  };
  auto typo = check({"python3", "trian.py"});
  REQUIRE_FALSE(typo);
  CHECK(typo.error().code == rv::ErrorCode::usage);
  CHECK(typo.error().message == "python3 trian.py: no such file in " + base.string());
  CHECK(typo.error().hint.find("did you mean train.py?") != std::string::npos);
  auto nested = check({"torchrun --nproc_per_node=2 scripts/evl.py"});
  REQUIRE_FALSE(nested);
  CHECK(nested.error().hint.find("did you mean scripts/eval.py?") != std::string::npos);
  auto far = check({"bash", "nothing-like-it.sh"});
  REQUIRE_FALSE(far);
  CHECK(far.error().hint.find("--workdir") != std::string::npos);
  // Fine: present files, modules, -c code, paths rv cannot see, tools it does not know, a cd first.
  CHECK(check({"python3", "train.py"}));
  CHECK(check({"python", "-m", "http.server"}));
  CHECK(check({"python", "-c", "print(1)"}));
  CHECK(check({"python", "/scratch/me/train.py"}));
  CHECK(check({"python", "$HOME/train.py"}));
  CHECK(check({"mytool", "missing.py"}));
  CHECK(check({"cd /scratch/me && python missing.py"}));
  CHECK(check({"sleep", "300"}));
  // #24 item 10: a program named by its relative path was queued and failed with 127 after the race.
  std::ofstream(base / "run.sh") << "x";
  auto dot = check({"./rnu.sh", "--fast"});
  REQUIRE_FALSE(dot);
  CHECK(dot.error().message.starts_with("run ./rnu.sh: no such file in " + base.string()));
  CHECK(dot.error().hint.find("did you mean ./run.sh?") != std::string::npos);
  CHECK_FALSE(check({"./nosuch.sh"}));
  CHECK_FALSE(check({"FOO=1 ./nosuch.sh x"}));
  CHECK(check({"./run.sh"}));
  fs::remove_all(base);
}

// Issue #38 item 7: the default sync root below rv's root as discovery resolved it costs no round
// trip; the login node's rule (`~`, relative = below $HOME) maps remote_root/workspaces to it.
TEST_CASE("app: the sync root below a resolved remote root is known without asking the cluster")
{
  using rv::app::workspaces_below;
  CHECK(workspaces_below("/home/u/.rv") == "/home/u/.rv/workspaces");
  CHECK(workspaces_below("/scratch/u/") == "/scratch/u/workspaces");
  CHECK(workspaces_below("~/.rv") == "~/.rv/workspaces");

  rv::test::RecordingRunner r([](const rv::proc::Command& c) {
    rv::proc::Outcome o;
    o.exit_code = 0;
    for (std::size_t i = 4; i < c.argv.size(); ++i) { // rv-resolve's paths, answered as the login node would
      o.out += (c.argv[i].starts_with("~/") ? "/home/u/" + c.argv[i].substr(2) : c.argv[i]) + '\0';
    }
    return o;
  });
  rv::app::Settings s;
  s.remote_root = "~/.rv";
  auto known = rv::app::resolve_sync_root(r, s, "/home/u/.rv");
  REQUIRE(known);
  CHECK(*known == "/home/u/.rv/workspaces");
  CHECK(r.round_trips() == 0);
  // Not resolved (no discovery): asked, and the answer is the same.
  auto asked = rv::app::resolve_sync_root(r, s, "");
  REQUIRE(asked);
  CHECK(*asked == *known);
  CHECK(r.round_trips() == 1);
  // A sync_root of its own is always asked about.
  s.sync_root = "~/ws";
  auto own = rv::app::resolve_sync_root(r, s, "/home/u/.rv");
  REQUIRE(own);
  CHECK(*own == "/home/u/ws");
  CHECK(r.round_trips() == 2);
}

namespace {

// The login node as this machine's shell with $HOME at `home`, recording each round trip (a run or
// a run_batch) and the names of its commands ($0 of `sh -c`/`bash -c`, seen through rv-resolving).
class HomeRecorder final : public rv::proc::Runner {
public:
  explicit HomeRecorder(std::string home) : m_home(std::move(home)) {}
  rv::Result<rv::proc::Outcome> run(const rv::proc::Command& c) override
  {
    trips.push_back({name_of(c)});
    ++m_round_trips;
    return m_local.run(at_home(c));
  }
  rv::Result<std::vector<rv::proc::Outcome>> run_batch(const std::vector<rv::proc::Command>& cmds) override
  {
    std::vector<std::string> names;
    std::vector<rv::proc::Command> homed;
    for (const auto& c : cmds) {
      names.push_back(name_of(c));
      homed.push_back(at_home(c));
    }
    trips.push_back(names);
    ++m_round_trips;
    return m_local.run_batch(homed);
  }
  std::string where() const override { return "recorded"; }

  std::vector<std::vector<std::string>> trips;

  // Every command name of every round trip since `from`.
  std::vector<std::string> names_since(std::size_t from) const
  {
    std::vector<std::string> all;
    for (std::size_t i = from; i < trips.size(); ++i) {
      all.insert(all.end(), trips[i].begin(), trips[i].end());
    }
    return all;
  }

private:
  static std::string name_of(const rv::proc::Command& c)
  {
    std::size_t at = 0;
    if (c.argv.size() > 4 && c.argv[3] == "rv-resolving") {
      at = 5; // the command it resolves for
    }
    if (c.argv.size() > at + 3 && c.argv[at + 1] == "-c") {
      return c.argv[at + 3];
    }
    return c.argv.at(at);
  }
  rv::proc::Command at_home(const rv::proc::Command& c) const
  {
    auto h = c;
    h.argv.insert(h.argv.begin(), {"env", "HOME=" + m_home});
    return h;
  }
  std::string m_home;
  rv::proc::LocalRunner m_local;
};

bool has_name(const std::vector<std::string>& names, const std::string& n)
{
  return std::find(names.begin(), names.end(), n) != names.end();
}

// A project (pyproject, no git) and a login node's home, with an Env whose cluster is that home.
struct AheadWorld {
  fs::path base;
  HomeRecorder cluster;
  rv::proc::LocalRunner local;
  rv::test::FakeClock clock;
  rv::store::RecordStore requests;
  rv::secrets::Store secrets;
  rv::app::Settings settings; // remote_root ~/.rv: the sync root is ~/.rv/workspaces
  rv::test::CaptureOutput output;
  rv::app::Env env;

  explicit AheadWorld(const char* name)
      : base(make_base(name)), cluster((base / "home").string()), requests(base / "requests"),
        secrets(base / "secrets.json"),
        env{cluster, local, clock, requests, secrets, settings, output, false, 0, "/nonexistent-home", base / "proj"}
  {
    fs::create_directories(base / "home");
    fs::create_directories(base / "proj");
    std::ofstream(base / "proj/pyproject.toml") << "[tool.x]\n"; // a project, without dependencies
    std::ofstream(base / "proj/train.py") << "print('hi')\n";
    env.workspace_key_file = base / "workspace.key";
  }
  ~AheadWorld() { fs::remove_all(base); }

  static fs::path make_base(const char* name)
  {
    auto b = fs::temp_directory_path() / ("rv-ahead-" + std::string(name) + "-" + std::to_string(::getpid()));
    fs::remove_all(b);
    return b;
  }
  fs::path workspaces() const { return base / "home/.rv/workspaces"; }

  // The reads made ahead, run as the plan's discovery batch runs them: one round trip.
  std::shared_ptr<rv::app::SyncAhead> read_ahead(const std::vector<std::string>& command)
  {
    auto a = rv::app::sync_ahead(env, command, {});
    REQUIRE(a);
    auto answers = cluster.run_batch(a->commands);
    REQUIRE(answers);
    a->answers = std::move(*answers);
    return std::make_shared<rv::app::SyncAhead>(std::move(*a));
  }
};

} // namespace

// Issue #38 item 7: `rv run`'s push lists the workspace (manifest, rsync?, target facts,
// base64/mktemp?) and the prune its snapshots and squeue in the plan's discovery batch; after the
// plan, the push is its apply alone.
TEST_CASE("app: rv run's push listing rides ahead in the plan's batch: after the plan, no listing round trip")
{
  AheadWorld w("rides");
  const std::vector<std::string> cmd = {"python3", "train.py"};
  auto ahead = w.read_ahead(cmd);
  // Reads only, run beside discovery's: the paths as configured, resolved there.
  REQUIRE(ahead->commands.size() == 7);
  for (const auto& c : ahead->commands) {
    CHECK(c.concurrent);
    CHECK(c.repeatable);
  }
  CHECK(ahead->configured.at(0) == "~/.rv/workspaces");
  CHECK(ahead->configured.at(1).starts_with("~/.rv/workspaces/proj-"));
  CHECK(ahead->configured.at(1).ends_with("/_default/code"));
  CHECK(w.cluster.trips.size() == 1);
  CHECK(w.cluster.trips[0] ==
        std::vector<std::string>{"rv-resolve", "rv-manifest", "sh", "rv-target", "sh", "rv-snapshots", "sh"});

  rv::app::SmartRunFlags flags;
  flags.ahead = ahead;
  const auto before = w.cluster.trips.size();
  auto run = rv::app::prepare_run(w.env, cmd, flags);
  REQUIRE_MESSAGE(run, run.error().message);
  const auto after = w.cluster.names_since(before);
  // No resolve and no listing again: the apply (the files inside it), then the snapshot.
  CHECK_FALSE(has_name(after, "rv-resolve"));
  CHECK_FALSE(has_name(after, "rv-manifest"));
  CHECK_FALSE(has_name(after, "rv-target"));
  CHECK_FALSE(has_name(after, "rv-snapshots"));
  CHECK(has_name(after, "rv-apply"));
  const auto home = (w.base / "home").string();
  CHECK(run->workdir.starts_with(w.workspaces().string() + "/proj-"));
  CHECK(fs::exists(fs::path(run->workdir) / "train.py"));
  CHECK(run->extras.sync["transport"] == "inline");
  const auto ws = run->extras.sync["workspace"].get<std::string>();
  CHECK(ws == home + ahead->configured.at(1).substr(1)); // the configured path, as rv_abs resolved it
  CHECK(fs::exists(fs::path(ws) / "train.py"));

  // The same push without the reads made ahead: they are made after the plan, as before.
  std::ofstream(w.base / "proj/train.py") << "print('changed')\n";
  const auto plain_from = w.cluster.trips.size();
  auto plain = rv::app::prepare_run(w.env, cmd, {});
  REQUIRE_MESSAGE(plain, plain.error().message);
  const auto plain_names = w.cluster.names_since(plain_from);
  CHECK(has_name(plain_names, "rv-manifest"));
  CHECK(has_name(plain_names, "rv-snapshots"));
}

// Issue #38 item 7: with the prune's listing read ahead, the job's snapshot is left to the
// submission's batch (its first command): after the plan, one round trip (the apply) here.
TEST_CASE("app: rv run leaves the snapshot to the submission's batch, and a login-node install makes it at once")
{
  AheadWorld w("in-submission");
  const std::vector<std::string> cmd = {"python3", "train.py"};
  rv::app::SmartRunFlags flags;
  flags.ahead = w.read_ahead(cmd);
  flags.snapshot_in_submission = true;
  auto from = w.cluster.trips.size();
  auto run = rv::app::prepare_run(w.env, cmd, flags);
  REQUIRE_MESSAGE(run, run.error().message);
  CHECK(w.cluster.trips.size() - from == 1);
  CHECK(w.cluster.names_since(from) == std::vector<std::string>{"rv-apply"});
  REQUIRE(run->extras.snapshot);
  const auto& s = *run->extras.snapshot;
  CHECK(s.workspace == run->extras.sync["workspace"].get<std::string>());
  CHECK(s.name == std::to_string(w.clock.epoch_seconds()) + "-" + run->extras.request_id);
  CHECK(run->workdir == rv::sync::snapshot_path(s.snapshots, s.name));
  CHECK(run->extras.sync["snapshot"] == run->workdir);
  CHECK_FALSE(fs::exists(run->workdir)); // the submission makes it
  auto made = w.cluster.run(rv::sync::snapshot_command(s.workspace, s.snapshots, s.name));
  REQUIRE(made);
  CHECK(rv::sync::snapshot_made(*made, "recorded", s.workspace, s.snapshots, s.name));
  CHECK(fs::exists(fs::path(run->workdir) / "train.py"));

  // A requirements.txt installed on the login node runs from the snapshot: made at once.
  std::ofstream(w.base / "proj/requirements.txt") << "\n";
  flags.ahead = w.read_ahead(cmd);
  w.settings.sync.deps_install = rv::sync::DepsInstall::login;
  from = w.cluster.trips.size();
  auto installed = rv::app::prepare_run(w.env, cmd, flags);
  // (the install itself fails here: no python venv tool is asked for; the snapshot came first)
  CHECK(has_name(w.cluster.names_since(from), "rv-snapshot"));
  if (installed) {
    CHECK_FALSE(installed->extras.snapshot);
  }
}

TEST_CASE("app: reads made ahead of another push are not used, and the push's refusals stay the same")
{
  AheadWorld w("refusals");
  const std::vector<std::string> cmd = {"python3", "train.py"};
  // Reads made for another project: listed again after the plan.
  auto ahead = w.read_ahead(cmd);
  auto other = std::make_shared<rv::app::SyncAhead>(*ahead);
  other->root = w.base / "elsewhere";
  rv::app::SmartRunFlags flags;
  flags.ahead = other;
  auto from = w.cluster.trips.size();
  auto run = rv::app::prepare_run(w.env, cmd, flags);
  REQUIRE_MESSAGE(run, run.error().message);
  CHECK(has_name(w.cluster.names_since(from), "rv-manifest"));

  // A file where the workspace should be: the same refusal, read ahead or not.
  const auto ws = fs::path(run->extras.sync["workspace"].get<std::string>());
  fs::remove_all(ws);
  std::ofstream(ws) << "not a directory";
  auto again = w.read_ahead(cmd);
  flags.ahead = again;
  from = w.cluster.trips.size();
  auto with = rv::app::prepare_run(w.env, cmd, flags);
  REQUIRE_FALSE(with);
  CHECK_FALSE(has_name(w.cluster.names_since(from), "rv-manifest"));
  auto without = rv::app::prepare_run(w.env, cmd, {});
  REQUIRE_FALSE(without);
  CHECK(with.error().message == without.error().message);
  CHECK(with.error().message.find("exists on the cluster and is not a directory") != std::string::npos);
  CHECK(with.error().hint == without.error().hint);
  CHECK(w.output.stdout_text.empty());

  // Nothing read ahead where rv pushes nothing: --no-sync, --workdir, no local file, a missing script.
  rv::app::SmartRunFlags no_sync;
  no_sync.no_sync = true;
  CHECK_FALSE(rv::app::sync_ahead(w.env, cmd, no_sync));
  CHECK_FALSE(rv::app::sync_ahead(w.env, {"nvidia-smi"}, {}));
  CHECK_FALSE(rv::app::sync_ahead(w.env, {"python3", "trian.py"}, {}));
}
