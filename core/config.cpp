#include "core/config.hpp"

#include "core/duration.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/record_store.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace rv {

const char* to_string(Origin origin)
{
  switch (origin) {
  case Origin::default_value:
    return "default";
  case Origin::file:
    return "file";
  case Origin::environment:
    return "env";
  case Origin::flag:
    return "flag";
  }
  return "default";
}

const std::vector<ConfigKey>& config_keys()
{
  static const std::vector<ConfigKey> keys = {
      {"host", "", "login node: [user@]host[:port] or a Host alias of ~/.ssh/config; empty = run locally"},
      {"hosts", "",
       "several login nodes, comma-separated: rv run, rv up and rv cost race one request across their clusters "
       "(docs/multi-cluster.md); as --host A --host B"},
      {"su_weights", "",
       "across clusters: each cluster's SU multiplied by its weight when ranking, e.g. rvtb=1,rvtb2=0.5 (default "
       "1)"},
      {"race_gate_wait", "5m",
       "across clusters: how long a started job waits for rv to choose it before it ends without running the "
       "command (exit 95)",
       ValueKind::duration},
      {"ssh_config", "~/.ssh/config", "OpenSSH client config file to honour"},
      {"identity_file", "", "private key to try before the agent and the defaults"},
      {"known_hosts", "", "known_hosts file (default: ~/.ssh/known_hosts, or UserKnownHostsFile)"},
      {"connect_timeout", "15s", "how long to wait for the SSH connection", ValueKind::duration},
      {"connection_persist",
       "30m",
       "keep the authenticated SSH connection in a background rv this long after its last use, for every "
       "later command (a second factor is typed once); 0 = a new connection per command",
       ValueKind::duration,
       {},
       0,
       0,
       true},
      {"account", "", "Slurm account (-A); empty = your default account"},
      {"qos", "", "Slurm QOS (--qos); empty = the partition's"},
      {"profile", "", "site profile file (aliases, VRAM, SU conversion, caps)"},
      {"remote_root", "~/.rv", "rv's directory on the cluster (logs, requests, snapshots)"},
      {"scratch_root", "", "scratch directory for caches (HF_HOME, pip, torch...); empty = remote_root/cache"},
      {"sync_root", "",
       "project workspaces, per-job snapshots and venvs on the cluster; empty = remote_root/workspaces"},
      {"sync_transport",
       "auto",
       "file transfer: auto (rsync over ssh when both sides have it, else SFTP), rsync, sftp",
       ValueKind::choice,
       {"auto", "rsync", "sftp"}},
      {"sync_max_file_size", "100M", "files larger than this are not sent (a warning names them); 0 = no limit",
       ValueKind::size},
      {"snapshot_keep", "7d", "snapshots older than this are pruned (never one whose job is queued or running)",
       ValueKind::duration},
      {"request_keep", "30d",
       "rv ps removes a finished request's directory and logs on the cluster once it is this old; 0 = never",
       ValueKind::duration},
      {"deps_install",
       "login",
       "install requirements.txt/pyproject.toml: login (before submitting), job, off",
       ValueKind::choice,
       {"login", "job", "off"}},
      {"container_runtime",
       "auto",
       "--container: auto (Pyxis when srun offers it, else Apptainer/Singularity, as discovery found them), pyxis, "
       "apptainer or singularity (docs/containers.md)",
       ValueKind::choice,
       {"auto", "pyxis", "apptainer", "singularity"}},
      {"watchdog_interval", "1m",
       "how often each node of a GPU job samples its GPUs for `rv ps`/`rv gpu` and --idle-timeout (1s to 1h)",
       ValueKind::duration},
      {"max_strategies", "8", "most strategies one request fans out to", ValueKind::count, {}, 1, 64},
      {"notify_email", "", "--notify: Slurm mails job start, end, failure and requeue to this address",
       ValueKind::email},
      {"notify_webhook", "", "--notify: the job POSTs signed JSON events here (secret: rv env set RV_WEBHOOK_SECRET)",
       ValueKind::url},
      {"probe_concurrency",
       "4",
       "backfill probe shapes sbatch --test-only runs at once on the login node (slurmctld is shared)",
       ValueKind::count,
       {},
       1,
       16},
      {"discovery_cache",
       "10m",
       "how long the static cluster facts (nodes, config, timezone, limits) are reused per host; 0 = off",
       ValueKind::duration,
       {},
       0,
       0,
       true},
      {"assoc_cache",
       "24h",
       "how long the association and QOS facts (sacctmgr) are reused per host, read again in the background "
       "once older than discovery_cache; 0 = with the other static facts",
       ValueKind::duration,
       {},
       0,
       0,
       true},
      {"refanout_max",
       "2",
       "rv run -f: how many times a request is raced again without a node that failed its preflight or "
       "died of a GPU fault; 0 = never",
       ValueKind::count,
       {},
       0,
       10},
      {"checkpoint", "false",
       "true: programs save and resume their state, so rv run may plan checkpoint segments (as --checkpoint)",
       ValueKind::boolean},
      {"time_scale",
       "1",
       "benchmarks only: the cluster's time runs this many times faster (planner knobs divided)",
       ValueKind::count,
       {},
       1,
       3600},
      {"log_level",
       "info",
       "stderr log level: trace, debug, info, warn, error",
       ValueKind::choice,
       {"trace", "debug", "info", "warn", "error"}},
  };
  return keys;
}

Config::Config()
{
  for (const auto& k : config_keys()) {
    m_values[k.name] = Value{k.default_value, Origin::default_value};
  }
}

const std::string& Config::get(const std::string& key) const
{
  return m_values.at(key).value;
}

Origin Config::origin(const std::string& key) const
{
  return m_values.at(key).origin;
}

Result<const ConfigKey*> find_config_key(const std::string& name)
{
  std::vector<std::string> names;
  for (const auto& k : config_keys()) {
    if (k.name == name) {
      return &k;
    }
    names.push_back(k.name);
  }
  auto guess = did_you_mean(name, names);
  return fail(ErrorCode::config, fmt::format("unknown config key '{}'", name),
              guess.empty() ? "`rv config show` lists the keys" : fmt::format("did you mean '{}'?", guess));
}

namespace {

// "a, b or c"
std::string one_of(const std::vector<std::string>& choices)
{
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  return out;
}

std::optional<std::int64_t> whole_number(const std::string& text)
{
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || p != text.data() + text.size()) {
    return std::nullopt;
  }
  return n;
}

} // namespace

bool is_http_url(std::string_view url)
{
  return (url.starts_with("https://") || url.starts_with("http://")) && url.find_first_of("\n\r\"\\ ") == url.npos;
}

Result<void> check_config_value(const ConfigKey& key, const std::string& value)
{
  auto bad = [&](const std::string& what, const std::string& hint) -> Result<void> {
    return fail(ErrorCode::config, fmt::format("{} '{}' is not {}", key.name, value, what), hint);
  };
  switch (key.kind) {
  case ValueKind::text:
    return {};
  case ValueKind::duration:
    if (key.zero_is_off && value == "0") {
      return {};
    }
    if (auto d = parse_duration(value); !d) {
      if (d.error().message.ends_with("must be positive")) { // "0s" is a duration, just not one to wait
        return fail(ErrorCode::config, fmt::format("{} '{}' must be longer than 0", key.name, value),
                    key.zero_is_off ? "e.g. 30s, or 0 for off" : "e.g. 30s, 15m, 2h");
      }
      return bad("a duration", "e.g. 30s, 15m, 2h, 7d");
    }
    return {};
  case ValueKind::size:
    if (value != "0" && !parse_memory_mb(value)) {
      return bad("a size", "e.g. 100M, 2G, or 0 for no limit");
    }
    return {};
  case ValueKind::count:
    if (auto n = whole_number(value); !n || *n < key.min || *n > key.max) {
      return bad(fmt::format("a whole number from {} to {}", key.min, key.max), "`rv config show` lists the values");
    }
    return {};
  case ValueKind::boolean:
    if (value != "true" && value != "false") {
      return bad("true or false", "e.g. rv config set checkpoint true");
    }
    return {};
  case ValueKind::choice:
    if (std::find(key.choices.begin(), key.choices.end(), value) == key.choices.end()) {
      return bad(one_of(key.choices), key.description);
    }
    return {};
  case ValueKind::url:
    if (!value.empty() && !is_http_url(value)) {
      return bad("an http(s) URL", fmt::format("e.g. rv config set {} https://hooks.example.org/rv", key.name));
    }
    return {};
  case ValueKind::email:
    if (auto at = value.find('@'); !value.empty() && (at == 0 || at == std::string::npos || at + 1 == value.size() ||
                                                      value.find_first_of(" \t\n\r,;<>\"'") != std::string::npos)) {
      return bad("an e-mail address", fmt::format("e.g. rv config set {} you@example.org", key.name));
    }
    return {};
  }
  return {};
}

nlohmann::json config_value_json(const ConfigKey& key, const std::string& value)
{
  if (key.kind == ValueKind::count) {
    if (auto n = whole_number(value)) {
      return *n;
    }
  }
  if (key.kind == ValueKind::boolean && (value == "true" || value == "false")) {
    return value == "true";
  }
  return value;
}

Result<void> write_config_value(const std::string& path, const std::string& key,
                                const std::optional<std::string>& value)
{
  RV_TRY(known, find_config_key(key));
  if (value) {
    RV_TRY_VOID(check_config_value(*known, *value));
  }
  // The file as it is, its other keys kept (even a bad value elsewhere: this may be its repair).
  nlohmann::json doc = nlohmann::json::object();
  if (std::ifstream in(path); in) {
    std::stringstream text;
    text << in.rdbuf();
    doc = nlohmann::json::parse(text.str(), nullptr, false);
    if (!doc.is_object()) {
      return fail(ErrorCode::config, fmt::format("config file {} is not a JSON object", path),
                  "fix or remove it; rv config set writes {\"key\": value, ...}");
    }
  }
  if (value) {
    doc[key] = config_value_json(*known, *value);
  } else {
    doc.erase(key);
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  return store::write_file_atomic(path, store::dump_for_display(doc) + "\n");
}

Result<void> Config::set(const std::string& key, std::string value, Origin from)
{
  RV_TRY(known, find_config_key(key));
  RV_TRY_VOID(check_config_value(*known, value)); // every layer is typed, not only `rv config set`
  m_values[known->name] = Value{std::move(value), from};
  return {};
}

Result<std::int64_t> Config::get_seconds(const std::string& key) const
{
  if (get(key) == "0") {
    if (auto k = find_config_key(key); k && (*k)->zero_is_off) {
      return 0;
    }
  }
  auto parsed = parse_duration(get(key));
  if (!parsed) {
    return fail(ErrorCode::config,
                fmt::format("config key '{}' ({}): {}", key, to_string(origin(key)), parsed.error().message),
                parsed.error().hint);
  }
  return *parsed;
}

Result<void> Config::load_file(const std::string& path)
{
  std::ifstream in(path);
  if (!in) {
    return {};
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) { // parse_error, and out_of_range for numbers like 1e999
    // "[json.exception.parse_error.101] parse error at line 2, ..." -> "parse error at line 2, ...".
    std::string why = e.what();
    if (auto close = why.find("] "); why.starts_with("[json.exception") && close != std::string::npos) {
      why = why.substr(close + 2);
    }
    return fail(ErrorCode::config, fmt::format("cannot parse config file {}: {}", path, why),
                "it must be one JSON object, e.g. {\"host\": \"login.example.edu\"}");
  }
  if (!doc.is_object()) {
    return fail(ErrorCode::config, fmt::format("config file {} is not a JSON object", path));
  }
  for (const auto& [key, value] : doc.items()) {
    std::string text_value;
    const auto known = find_config_key(key);
    const auto kind = known ? (*known)->kind : ValueKind::count;
    if (value.is_string()) {
      text_value = value.get<std::string>();
    } else if ((value.is_number() || value.is_boolean()) && (kind == ValueKind::text || kind == ValueKind::choice ||
                                                             kind == ValueKind::url || kind == ValueKind::email)) {
      // {"host": 5} is no host name: the README promises every value is checked in every layer.
      const auto& example = (*known)->default_value;
      return fail(ErrorCode::config,
                  fmt::format("config file {}: '{}' must be a string, not {}", path, key, value.dump()),
                  fmt::format("e.g. {{\"{}\": \"{}\"}}", key, example.empty() ? "..." : example));
    } else if (value.is_number() || value.is_boolean()) {
      text_value = value.dump();
    } else {
      return fail(ErrorCode::config, fmt::format("config file {}: '{}' must be a string or number", path, key));
    }
    auto r = set(key, text_value, Origin::file);
    if (!r) {
      r.error().message = fmt::format("{}: {}", path, r.error().message);
      return r;
    }
  }
  return {};
}

Result<void> Config::load_env(const std::map<std::string, std::string>& env)
{
  for (const auto& k : config_keys()) {
    auto var = text::upper("RV_" + k.name);
    std::ranges::replace(var, '-', '_');
    if (auto it = env.find(var); it != env.end()) {
      if (auto ok = check_config_value(k, it->second); !ok) {
        ok.error().message = fmt::format("{}: {}", var, ok.error().message);
        return ok;
      }
      m_values[k.name] = Value{it->second, Origin::environment};
    }
  }
  return {};
}

std::string Config::default_path()
{
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) {
    return std::string(xdg) + "/rv/config.json";
  }
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.config/rv/config.json";
}

std::map<std::string, std::string> environment_map()
{
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string_view::npos) {
      env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
  }
  return env;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates)
{
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
      row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    auto d = distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

} // namespace rv
