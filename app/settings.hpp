#pragma once
// rv's settings as the application core reads them: typed and checked once, from the layered
// config (defaults < file < RV_* < flags) by cli/, then carried by the Env. app/ never looks a key
// up by name.

#include "core/config.hpp"
#include "core/result.hpp"
#include "sync/deps.hpp"
#include "sync/files.hpp"
#include "sync/transfer.hpp"

#include <cstdint>
#include <string>

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
  int refanout_max = 2;                 // re-fan-out rounds around failed nodes (app/run/refanout.hpp)
  SyncSettings sync;
  std::int64_t watchdog_interval_s = 60;    // GPU samples in the job script (docs/gpu.md)
  std::int64_t request_keep_s = 30 * 86400; // finished requests' remote state and logs; 0 = kept
};

// The sync part alone (rv sync checks nothing else). `home` expands `~/` in local paths.
Result<SyncSettings> sync_settings(const Config& config, const std::string& home);

// Reads and checks every setting the core uses; an invalid value is a config error naming it.
Result<Settings> read_settings(const Config& config, const std::string& home);

} // namespace rv::app
