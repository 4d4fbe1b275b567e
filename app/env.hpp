#pragma once
// The application core's one door to the world. Every effect of the request lifecycle (plan,
// submit, race, follow, retry, reap, smart execution) comes in through an Env: the runners, the
// clock, the stores, the settings and the output sink. Nothing in app/ reads the wall clock,
// the environment or the terminal, or builds a runner, clock or store of its own; cli/ builds the
// real Env, tests build one from fakes (tests/unit/app).

#include "app/settings.hpp"
#include "core/clock.hpp"
#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "core/secrets.hpp"
#include "core/store/cache_store.hpp"
#include "core/store/record_store.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

// What the user's stderr is, as cli/ found it (isatty, NO_COLOR, the window size): app/ never
// asks the terminal itself.
struct Terminal {
  bool tty = false;   // a terminal: the live status refreshes in place (app/run/show/live_status.hpp)
  bool color = false; // a terminal and NO_COLOR unset
  int width = 0;      // columns; 0 = unknown
};

// Where the user sees what rv says and what the job prints. `out` is stdout's role (results,
// the job's own output, JSON documents), `err` stderr's (the job's stderr, progress).
class Output {
public:
  virtual ~Output() = default;
  virtual void out(std::string_view text) = 0;
  virtual void err(std::string_view text) = 0;
  // Shows `lines` (app/run/show/status_view.hpp made them) as the live status block on stderr, replacing
  // the block shown before; no lines removes it. Anything else written (out, err, a log line)
  // erases the block first; only the next status() draws it again. Called only on a terminal.
  virtual void status(const std::vector<std::string>& lines) { (void)lines; }
  virtual Terminal terminal() const { return {}; }
};

// What a command leaves for after its answer: cli runs it in a background rv once the command
// has answered (cli/after_work.cpp), never on the command's own critical path.
struct AfterWork {
  bool refresh_assoc = false;        // the cached association facts are due a refresh (app/run/plan/assoc_cache.hpp)
  std::vector<std::string> requests; // requests submitted: Slurm's first start estimates to record
  std::int64_t bf_interval_s = 30;   // the cluster's backfill interval: Slurm estimates after one
};

struct Env;

// The clusters of one request raced across several login nodes (docs/multi-cluster.md): each
// host's own Env (its runner and settings; the stores, the clock and the output are shared),
// made on first use. Opening does not connect: the Env's first command does.
class Clusters {
public:
  virtual ~Clusters() = default;
  // The Env of `host` as the user named it (an ~/.ssh/config alias or [user@]host[:port]); an
  // error when its settings cannot be made.
  virtual Result<Env*> open(const std::string& host) = 0;
  // Starts a background rv that settles race group member `request_id` (`rv run` without -f):
  // it chooses the first cluster whose job starts and cancels the rest, then exits. It outlives
  // this process and the terminal.
  virtual Result<void> settle_in_background(const std::string& request_id) = 0;
};

struct Env {
  proc::Runner& cluster;        // the login node (SSH) or local Slurm
  proc::Runner& local;          // this machine: git, rsync, hashing the project
  Clock& clock;                 // waits, deadlines and the wall clock (epoch_seconds)
  store::RecordStore& requests; // the local request records (docs/requests.md)
  secrets::Store& secrets;      // `rv env` secrets (docs/secrets.md)
  const Settings& settings;     // typed and checked (app/settings.hpp)
  Output& output;
  bool json = false;         // --json: documents on `out`, nothing else there
  int verbosity = 0;         // -v count
  std::string home;          // the local home directory ("" = unknown): never sent whole
  std::filesystem::path cwd; // where rv was started: smart execution's project lookup
  bool quiet = false;        // --quiet: nothing but the job's output, warnings and errors
  // rv's local caches (the per-host discovery cache, docs/discovery-cache.md); nullptr = none.
  store::CacheStore* cache = nullptr;
  // The local key that signs `.rv-workspace` markers (core/store/key_file.hpp), made on first
  // use; "" = none: no marker is trusted and pushes delete only in rv's own workspaces.
  std::filesystem::path workspace_key_file = {};
  AfterWork after = {}; // filled while the command runs
  // The login node as the user named it ("" = Slurm on this machine): what a request record keeps
  // so that a later command can reach its cluster again (docs/multi-cluster.md).
  std::string destination = {};
  // Every cluster rv may be asked to reach (nullptr = only `cluster`).
  Clusters* clusters = nullptr;
};

} // namespace rv::app
