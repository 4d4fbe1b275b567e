#include "app/settings.hpp"

#include "core/container.hpp"
#include "core/duration.hpp"
#include "core/number.hpp"
#include "core/ssh/options.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rv::app {

Result<SyncSettings> sync_settings(const Config& c, const std::string& home)
{
  SyncSettings s;
  // Config checked the value against the key's choices; this only names it as the enum.
  auto transport = sync::parse_transport(c.get("sync_transport"));
  if (!transport) {
    return fail(ErrorCode::config,
                fmt::format("sync_transport '{}' is not auto, rsync or sftp", c.get("sync_transport")),
                "rv config show lists the settings");
  }
  s.push.transport = *transport;
  // The connection rsync takes: the very options rv's own session takes (Context::ssh_options), so
  // both find the same held connection.
  RV_TRY(ssh, proc::ssh_options_from(c, home));
  s.push.ssh = std::move(ssh);
  const auto& max = c.get("sync_max_file_size");
  if (max == "0" || max.empty()) {
    s.select.max_file_bytes = 0;
  } else {
    auto mb = parse_memory_mb(max);
    if (!mb) {
      return fail(ErrorCode::config, fmt::format("sync_max_file_size '{}' is not a size", max),
                  "e.g. 100M, 2G, or 0 for no limit");
    }
    s.select.max_file_bytes = static_cast<std::uint64_t>(*mb) << 20;
  }
  auto keep = c.get_seconds("snapshot_keep");
  if (!keep) {
    return fail(ErrorCode::config, fmt::format("snapshot_keep '{}' is not a duration", c.get("snapshot_keep")),
                "e.g. 7d, 36h");
  }
  s.snapshot_keep_s = *keep;
  auto deps = sync::parse_deps_install(c.get("deps_install"));
  if (!deps) {
    return fail(ErrorCode::config, fmt::format("deps_install '{}' is not login, job or off", c.get("deps_install")),
                "login installs before submitting; job installs in the job (login nodes without internet)");
  }
  s.deps_install = *deps;
  return s;
}

Result<std::vector<std::string>> parse_hosts(const std::string& text)
{
  std::vector<std::string> hosts;
  if (text::trim(text).empty()) {
    return hosts;
  }
  for (const auto& item : text::split(text, ",")) {
    const std::string h(text::trim(item));
    if (h.empty()) {
      return fail(ErrorCode::config, fmt::format("hosts '{}' has an empty item", text),
                  "list login nodes separated by commas, e.g. rvtb,rvtb2");
    }
    if (std::find(hosts.begin(), hosts.end(), h) != hosts.end()) {
      return fail(ErrorCode::config, fmt::format("hosts '{}' names {} twice", text, h), "name each login node once");
    }
    hosts.push_back(h);
  }
  return hosts;
}

Result<std::map<std::string, double>> parse_su_weights(const std::string& text)
{
  std::map<std::string, double> weights;
  if (text::trim(text).empty()) {
    return weights;
  }
  for (const auto& item : text::split(text, ",")) {
    const auto eq = item.find('=');
    const std::string host(text::trim(item.substr(0, eq == std::string_view::npos ? item.size() : eq)));
    const std::string value(eq == std::string_view::npos ? std::string_view() : text::trim(item.substr(eq + 1)));
    const auto parsed = text::parse_double(value);
    const double w = parsed.value_or(0);
    if (host.empty() || value.empty() || !parsed || !(w > 0)) {
      return fail(
          ErrorCode::config,
          fmt::format("su_weights item '{}' is not HOST=WEIGHT with a weight above 0", std::string(text::trim(item))),
          "e.g. rv config set su_weights rvtb=1,rvtb2=0.5");
    }
    weights[host] = w;
  }
  return weights;
}

Result<Settings> read_settings(const Config& config, const std::string& home)
{
  Settings s;
  s.remote_root = config.get("remote_root");
  s.scratch_root = config.get("scratch_root");
  s.sync_root = config.get("sync_root");
  s.profile = config.get("profile");
  s.notify_email = config.get("notify_email");
  s.notify_webhook = config.get("notify_webhook");
  RV_TRY(cache, config.get_seconds("discovery_cache"));
  s.discovery_cache_s = cache;
  RV_TRY(assoc_cache, config.get_seconds("assoc_cache"));
  s.assoc_cache_s = assoc_cache;
  const auto& concurrency = config.get("probe_concurrency");
  int n = 0;
  auto [end, ec] = std::from_chars(concurrency.data(), concurrency.data() + concurrency.size(), n);
  if (ec != std::errc{} || end != concurrency.data() + concurrency.size() || n < 1 || n > 16) {
    return fail(ErrorCode::config,
                fmt::format("probe_concurrency '{}' is not a whole number from 1 to 16", concurrency),
                "e.g. rv config set probe_concurrency 4");
  }
  s.probe_concurrency = n;
  s.refanout_max = std::stoi(config.get("refanout_max")); // a count 0..10, checked by the config
  RV_TRY(sync, sync_settings(config, home));
  s.sync = std::move(sync);
  RV_TRY(interval, config.get_seconds("watchdog_interval"));
  if (interval < 1 || interval > 3600) {
    return fail(ErrorCode::config,
                fmt::format("watchdog_interval '{}' is out of range", config.get("watchdog_interval")),
                "use 1s to 1h (the default is 1m)");
  }
  s.watchdog_interval_s = interval;
  RV_TRY(hosts, parse_hosts(config.get("hosts")));
  s.hosts = std::move(hosts);
  RV_TRY(weights, parse_su_weights(config.get("su_weights")));
  s.su_weights = std::move(weights);
  RV_TRY(gate, config.get_seconds("race_gate_wait"));
  if (gate < 10) {
    return fail(ErrorCode::config, fmt::format("race_gate_wait '{}' is too short", config.get("race_gate_wait")),
                "use 10s or more (the default is 5m): rv must be able to choose a started job in time");
  }
  s.race_gate_wait_s = gate;
  RV_TRY(keep, config.get_seconds("request_keep"));
  s.request_keep_s = keep;
  RV_TRY(runtime, parse_runtime_setting(config.get("container_runtime")));
  s.container_runtime = runtime;
  return s;
}

} // namespace rv::app
