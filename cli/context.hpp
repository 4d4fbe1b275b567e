#pragma once
// What every subcommand shares: global options, the layered config, and the runner.

#include "app/env.hpp"
#include "core/clock.hpp"
#include "core/config.hpp"
#include "core/process/local_runner.hpp"
#include "core/process/runner.hpp"
#include "core/secrets.hpp"
#include "core/store/record_store.hpp"

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rv::proc {
struct SshOptions;
}

namespace rv::cli {

// $HOME, or "" when unset.
std::string local_home();

// `~/x` -> `$HOME/x` (a local path from the config).
std::string expand_home(const std::string& path);

// The local store of request records ($RV_STATE_DIR/requests, else $XDG_STATE_HOME/rv/requests).
store::RecordStore request_store();

// rv's local caches ($RV_STATE_DIR/cache, else $XDG_STATE_HOME/rv/cache).
store::CacheStore cache_store();

// Flags that every command takes.
struct GlobalOptions {
  // Unset optionals were not given; a given empty value is meaningful (`--ssh-config ''`).
  // -H/--host, repeatable: one login node, or several to race one request across their clusters.
  std::vector<std::string> hosts;
  std::string config_file;
  std::optional<std::string> identity_file;
  std::optional<std::string> known_hosts;
  std::optional<std::string> ssh_config;
  std::optional<std::string> connect_timeout;
  std::optional<std::string> account;
  int verbosity = 0;
  bool quiet = false;
  bool json = false;
};

// The terminal as the application core's output: stdout and stderr, flushed per write so that
// a job's streamed output and rv's own lines keep their order. On a terminal it draws the live
// status block (app/run/show/status_view.hpp) at the bottom of stderr and erases it before anything else
// is written there or on stdout; a log line is written above it (core/log.hpp's interlude).
class StdOutput final : public app::Output {
public:
  StdOutput(); // stdout, stderr, and what detect() finds
  StdOutput(std::FILE* out, std::FILE* err, app::Terminal terminal);
  ~StdOutput() override;
  StdOutput(const StdOutput&) = delete;
  StdOutput& operator=(const StdOutput&) = delete;
  void out(std::string_view text) override;
  void err(std::string_view text) override;
  void status(const std::vector<std::string>& lines) override;
  app::Terminal terminal() const override { return m_terminal; }

  // This process's stderr: a terminal (and TERM is not dumb), colours unless NO_COLOR is set,
  // the window's width.
  static app::Terminal detect();

private:
  void hide(); // erases the block, if one is shown
  std::FILE* m_out;
  std::FILE* m_err;
  app::Terminal m_terminal;
  std::vector<std::string> m_lines; // the block shown, if m_rows > 0
  std::size_t m_rows = 0;
};

// The real effects behind an app::Env: the cluster runner the config asks for, this machine,
// the system clock, the request and secrets stores, the terminal. Built once per command.
struct RealEnv {
  std::unique_ptr<proc::Runner> cluster;
  app::Settings settings;
  proc::LocalRunner local;
  SystemClock clock;
  store::RecordStore requests;
  secrets::Store secrets;
  StdOutput output;
  store::CacheStore cache;
  app::Env env;
  std::unique_ptr<app::Clusters> clusters; // env.clusters: the other hosts of `hosts`, or a record's

  RealEnv(std::unique_ptr<proc::Runner> runner, app::Settings typed, bool json, int verbosity, bool quiet);
  RealEnv(const RealEnv&) = delete;
  RealEnv& operator=(const RealEnv&) = delete;
};

// --host's list (or a task file's `hosts`) into the config's flag layer: one is `host`, several
// are `hosts`; none changes nothing.
Result<void> set_host_flags(Config& config, const std::vector<std::string>& hosts);

// State shared by main and the subcommands.
struct Context {
  GlobalOptions global;
  Config config;
  std::string config_file;       // the config file rv looked for (named, or the default)
  bool config_file_read = false; // it existed and was read
  // The user's command after `rv exec` (see cli/command_words.hpp), verbatim.
  std::vector<std::string> trailing;
  // `rv config set|unset` run even when the config does not load: they may be its repair.
  bool tolerate_bad_config = false;
  // The selected subcommand's action; returns the process exit code.
  std::function<Result<int>()> action;

  // Layers the config file, the environment and the flags into `config`.
  Result<void> load_config();
  // Creates the runner the config asks for: SSH when a host is set, else local Slurm.
  Result<std::unique_ptr<proc::Runner>> make_runner();
  // The SSH settings of `host` (the configured one when empty): the session make_runner() opens.
  Result<proc::SshOptions> ssh_options(const std::string& host = {});
  // make_runner() and everything else the application core needs (app/env.hpp), with every other
  // cluster reachable through env.clusters.
  Result<std::unique_ptr<RealEnv>> make_env();
  // The same for login node `host` (as the user names it), whatever the config's host is.
  Result<std::unique_ptr<RealEnv>> make_env_for(const std::string& host);
  // make_env() on the cluster of the request `key` names: its own login node, whatever the config
  // says (docs/multi-cluster.md). `key` becomes the request's id; for a race member that lost, the
  // chosen member's. No KEY ("") keeps each command's own meaning on the configured host.
  Result<std::unique_ptr<RealEnv>> make_env_for_request(std::string& key);
};

} // namespace rv::cli
