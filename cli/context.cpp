#include "cli/context.hpp"

#include "app/run/launch/cluster_race.hpp"
#include "app/run/show/status_view.hpp"
#include "core/log.hpp"
#include "core/platform/platform.hpp"
#include "core/process/daemon.hpp"
#include "core/process/local_runner.hpp"
#include "core/process/local_user.hpp"
#include "core/ssh/runner.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sys/ioctl.h>
#include <unistd.h>

namespace rv::cli {

std::string expand_home(const std::string& path)
{
  if (path.starts_with("~/")) {
    return proc::local_home_dir() + path.substr(1);
  }
  return path;
}

Result<void> set_host_flags(Config& config, const std::vector<std::string>& hosts)
{
  if (hosts.empty()) {
    return {};
  }
  // One --host is one cluster, whatever `hosts` the config lists; several are the `hosts` list.
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"host", hosts.front()},
                                   {"hosts", hosts.size() > 1 ? text::join(hosts, ",") : ""}}) {
    if (auto r = config.set(key, value, Origin::flag); !r) {
      return r;
    }
  }
  return {};
}

Result<void> Context::load_config()
{
  auto env = environment_map();
  std::string path = global.config_file;
  std::string named_by = path.empty() ? "" : "--config";
  if (path.empty()) {
    auto it = env.find("RV_CONFIG");
    if (it != env.end() && !it->second.empty()) {
      path = it->second;
      named_by = "RV_CONFIG";
    } else {
      path = Config::default_path();
    }
  }
  std::error_code ec;
  config_file_read = std::filesystem::exists(path, ec);
  config_file = path;
  if (!named_by.empty() && !config_file_read) { // a file the user named must exist; the default may not
    return fail(ErrorCode::config, fmt::format("config file {} (from {}) does not exist", path, named_by),
                fmt::format("fix {} or create the file; `rv config show` lists the keys", named_by));
  }
  if (auto r = config.load_file(path); !r) {
    return r;
  }
  if (auto r = config.load_env(env); !r) {
    return r;
  }
  const std::pair<const char*, const std::optional<std::string>*> flags[] = {
      {"identity_file", &global.identity_file},
      {"known_hosts", &global.known_hosts},
      {"ssh_config", &global.ssh_config},
      {"connect_timeout", &global.connect_timeout},
      {"account", &global.account},
  };
  if (auto r = set_host_flags(config, global.hosts); !r) {
    return r;
  }
  for (const auto& [key, value] : flags) {
    if (value->has_value()) {
      if (auto r = config.set(key, **value, Origin::flag); !r) {
        return r;
      }
    }
  }
  return {};
}

Result<std::unique_ptr<proc::Runner>> Context::make_runner()
{
  // An SSH config the user named (flag, env or file) must exist; '' means none.
  if (const auto& sc = config.get("ssh_config"); !sc.empty() && config.origin("ssh_config") != Origin::default_value) {
    std::error_code ec;
    if (!std::filesystem::exists(expand_home(sc), ec)) {
      return fail(ErrorCode::config,
                  fmt::format("ssh config {} (from {}) does not exist", sc, to_string(config.origin("ssh_config"))),
                  "fix --ssh-config / RV_SSH_CONFIG, or pass --ssh-config '' to read none");
    }
  }
  const auto& host = config.get("host");
  if (host.empty()) {
    if (!proc::on_path("sinfo")) {
      return fail(ErrorCode::usage, "no cluster to talk to: no --host given and Slurm's commands are not on PATH",
                  "run `rv init` to set up your cluster (or pass --host [user@]login-node, or set RV_HOST)");
    }
    spdlog::debug("runner: local (Slurm commands on PATH)");
    return std::make_unique<proc::LocalRunner>();
  }
  RV_TRY(options, ssh_options());
  spdlog::debug("runner: ssh {}", host);
  return std::make_unique<proc::SshRunner>(std::move(options));
}

Result<proc::SshOptions> Context::ssh_options(const std::string& host)
{
  return proc::ssh_options_from(config, proc::local_home_dir(), host);
}

store::RecordStore request_store()
{
  return store::RecordStore(store::RecordStore::default_dir());
}

namespace {

void put(std::FILE* f, std::string_view text)
{
  std::fwrite(text.data(), 1, text.size(), f);
  std::fflush(f);
}

} // namespace

StdOutput::StdOutput() : StdOutput(stdout, stderr, detect()) {}

StdOutput::StdOutput(std::FILE* out, std::FILE* err, app::Terminal terminal)
    : m_out(out), m_err(err), m_terminal(terminal)
{}

StdOutput::~StdOutput()
{
  hide();
}

app::Terminal StdOutput::detect()
{
  app::Terminal t;
  const char* term = std::getenv("TERM");
  t.tty = ::isatty(2) != 0 && !(term && std::string_view(term) == "dumb");
  const char* no_color = std::getenv("NO_COLOR");
  t.color = t.tty && !(no_color && *no_color);
  winsize ws{};
  if (t.tty && ::ioctl(2, TIOCGWINSZ, &ws) == 0) {
    t.width = ws.ws_col;
  }
  return t;
}

void StdOutput::hide()
{
  if (m_rows == 0) {
    return;
  }
  set_log_interlude({}, {});
  put(m_err, app::erase_block(m_rows));
  m_rows = 0;
  m_lines.clear();
}

void StdOutput::status(const std::vector<std::string>& lines)
{
  if (lines.empty()) {
    hide();
    return;
  }
  put(m_err, app::redraw_block(m_rows, lines));
  m_lines = lines;
  m_rows = lines.size();
  // A log line goes above the block: erased before it, drawn again after it.
  set_log_interlude([this] { put(m_err, app::erase_block(m_rows)); },
                    [this] { put(m_err, app::redraw_block(0, m_lines)); });
}

void StdOutput::out(std::string_view text)
{
  hide();
  put(m_out, text);
}

void StdOutput::err(std::string_view text)
{
  hide();
  put(m_err, text);
}

std::string local_home()
{
  return proc::local_home_dir(); // $HOME, else the password entry (core/process/local_user.hpp)
}

store::CacheStore cache_store()
{
  return store::CacheStore(store::CacheStore::default_dir());
}

namespace {

std::filesystem::path current_dir()
{
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  return ec ? std::filesystem::path() : cwd;
}
} // namespace

RealEnv::RealEnv(std::unique_ptr<proc::Runner> runner, app::Settings typed, bool json, int verbosity, bool quiet)
    : cluster(std::move(runner)), settings(std::move(typed)), requests(request_store()),
      secrets(secrets::Store::default_path()), cache(cache_store()),
      env{*cluster, local, clock,     requests,     secrets,       settings,
          output,   json,  verbosity, local_home(), current_dir(), quiet}
{
  env.cache = &cache;
  env.workspace_key_file = requests.dir().parent_path() / "workspace.key";
}

namespace {

// Each other cluster's Env, made from this command's context with only the host changed, and
// sharing the first Env's output (one terminal, one live status block).
class RealClusters final : public app::Clusters {
public:
  RealClusters(const Context& ctx, app::Env& first) : m_ctx(ctx), m_first(first) {}

  Result<app::Env*> open(const std::string& host) override
  {
    if (host == m_first.destination) {
      return &m_first;
    }
    if (auto it = m_open.find(host); it != m_open.end()) {
      return it->second.env.get();
    }
    Context c = m_ctx;
    c.action = nullptr;
    RV_TRY(real, c.make_env_for(host));
    auto env = std::make_unique<app::Env>(app::Env{*real->cluster, real->local, m_first.clock, m_first.requests,
                                                   m_first.secrets, real->settings, m_first.output, m_first.json,
                                                   m_first.verbosity, m_first.home, m_first.cwd, m_first.quiet});
    env->cache = m_first.cache;
    env->workspace_key_file = m_first.workspace_key_file;
    env->destination = host;
    env->clusters = this;
    auto* shown = env.get();
    m_open.emplace(host, Opened{std::move(real), std::move(env)});
    return shown;
  }

  Result<void> settle_in_background(const std::string& request_id) override
  {
    // The same rv, with this command's connection settings, settling the race by its records.
    std::vector<std::string> argv = {platform::self_exec_path()};
    const auto& g = m_ctx.global;
    if (!g.config_file.empty()) {
      argv.insert(argv.end(), {"--config", g.config_file});
    }
    for (const auto& [flag, value] :
         {std::pair<const char*, const std::optional<std::string>*>{"--identity", &g.identity_file},
          {"--known-hosts", &g.known_hosts},
          {"--ssh-config", &g.ssh_config},
          {"--connect-timeout", &g.connect_timeout}}) {
      if (value->has_value()) {
        argv.insert(argv.end(), {flag, **value});
      }
    }
    if (!m_first.destination.empty()) {
      argv.insert(argv.end(), {"--host", m_first.destination});
    }
    argv.insert(argv.end(), {"_settle", request_id});
    const auto log = app::settle_log_path(m_first.requests, request_id);
    std::error_code ec;
    std::filesystem::create_directories(m_first.requests.dir(), ec);
    return proc::spawn_detached(argv, log.string());
  }

private:
  struct Opened {
    std::unique_ptr<RealEnv> real;
    std::unique_ptr<app::Env> env;
  };
  Context m_ctx;
  app::Env& m_first;
  std::map<std::string, Opened> m_open;
};

} // namespace

Result<std::unique_ptr<RealEnv>> Context::make_env()
{
  RV_TRY(typed, app::read_settings(config, local_home())); // a bad value fails here, naming its key
  RV_TRY(runner, make_runner());
  auto real =
      std::make_unique<RealEnv>(std::move(runner), std::move(typed), global.json, global.verbosity, global.quiet);
  real->env.destination = config.get("host");
  real->clusters = std::make_unique<RealClusters>(*this, real->env);
  real->env.clusters = real->clusters.get();
  return real;
}

Result<std::unique_ptr<RealEnv>> Context::make_env_for_request(std::string& key)
{
  if (key.empty()) { // no KEY means what each command says ("the latest", "any running"): not routed
    return make_env();
  }
  auto store = request_store();
  const auto route = app::route_request(store, key);
  if (!route) {
    return make_env();
  }
  key = route->id;
  if (route->destination.empty() || route->destination == config.get("host")) {
    return make_env();
  }
  spdlog::debug("request {} is on {}", route->id, route->destination);
  return make_env_for(route->destination);
}

Result<std::unique_ptr<RealEnv>> Context::make_env_for(const std::string& host)
{
  Context c = *this;
  c.action = nullptr;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"host", host}, {"hosts", ""}}) {
    RV_TRY_VOID(c.config.set(key, value, Origin::flag));
  }
  RV_TRY(typed, app::read_settings(c.config, local_home()));
  RV_TRY(runner, c.make_runner());
  auto real =
      std::make_unique<RealEnv>(std::move(runner), std::move(typed), global.json, global.verbosity, global.quiet);
  real->env.destination = host;
  real->clusters = std::make_unique<RealClusters>(*this, real->env);
  real->env.clusters = real->clusters.get();
  return real;
}

} // namespace rv::cli
