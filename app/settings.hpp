#pragma once
// rv's settings as the application core reads them: typed and checked once, from the layered
// config (defaults < file < RV_* < flags) by cli/, then carried by the Env. app/ never looks a key
// up by name.

#include "core/config.hpp"
#include "core/model/container.hpp"
#include "core/result.hpp"
#include "sync/deps.hpp"
#include "sync/files.hpp"
#include "sync/transfer.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rv::app {

// The sync settings of the config (transport, size limit, snapshot age, deps mode, SSH).
struct SyncSettings {
  sync::PushOptions push;
  sync::SelectOptions select;
  std::int64_t snapshot_keep_s = 7 * 86400;
  sync::DepsInstall deps_install = sync::DepsInstall::login;
};

struct Settings {
  std::string remote_root = "~/.rv";    // rv's directory on the cluster (`~` resolved there)
  std::string scratch_root;             // caches; "" = <remote_root>/cache
  std::string sync_root;                // project workspaces; "" = <remote_root>/workspaces
  std::string profile;                  // site profile file; "" = none
  std::string notify_email;             // --notify: Slurm mail to this address; "" = none
  std::string notify_webhook;           // --notify: signed POSTs from the job to this URL; "" = none
  int probe_concurrency = 4;            // backfill probe shapes run at once (slurm/probe.hpp)
  std::int64_t discovery_cache_s = 600; // expiry of the per-host discovery cache; 0 = off
  std::int64_t assoc_cache_s = 86400;   // lifetime of the cached association facts; 0 = with the others
  // Across clusters (docs/multi-cluster.md): the login nodes of one request, each cluster's SU
  // weight (absent = 1), and how long a started job waits to be chosen before it ends unchosen.
  std::vector<std::string> hosts;
  std::map<std::string, double> su_weights;
  double su_weight(const std::string& host) const // `host`'s weight: 1 when none is set
  {
    const auto w = su_weights.find(host);
    return w == su_weights.end() ? 1.0 : w->second;
  }
  std::int64_t race_gate_wait_s = 300;
  int refanout_max = 2; // re-fan-out rounds around failed nodes (app/run/launch/refanout.hpp)
  SyncSettings sync;
  std::int64_t watchdog_interval_s = 60;    // GPU samples in the job script (docs/gpu.md)
  std::int64_t request_keep_s = 30 * 86400; // finished requests' remote state and logs; 0 = kept
  model::RuntimeSetting container_runtime = model::RuntimeSetting::automatic; // --container (docs/containers.md)
};

// The sync part alone (rv sync checks nothing else). `home` expands `~/` in local paths.
Result<SyncSettings> sync_settings(const Config& config, const std::string& home);

// Reads and checks every setting the core uses; an invalid value is a config error naming it.
// "a, b,c" -> {a, b, c}: the `hosts` setting; an empty item or a repeated host is a config error.
Result<std::vector<std::string>> parse_hosts(const std::string& text);

// "rvtb=1,rvtb2=0.5" -> the `su_weights` setting; a weight must be a number above 0.
Result<std::map<std::string, double>> parse_su_weights(const std::string& text);

Result<Settings> read_settings(const Config& config, const std::string& home);

} // namespace rv::app
