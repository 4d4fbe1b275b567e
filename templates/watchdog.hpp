#pragma once
// The idle and hang watchdog's options (docs/gpu.md): what the job script samples, and when it
// ends the job itself. Rendered by templates/watchdog.cpp into every GPU job's script.

#include <cstdint>
#include <string>
#include <string_view>

namespace rv::templates {

// Exit codes of a job the watchdog ended (docs/exit-codes.md).
inline constexpr int k_exit_idle = 95; // every GPU at 0 % for --idle-timeout
inline constexpr int k_exit_hang = 94; // multi-node: the log and every GPU unchanged for --idle-timeout

// Sample files keep the last k_samples_kept lines once they reach twice that many.
inline constexpr int k_samples_kept = 1000;

struct WatchdogOptions {
  std::int64_t interval_s = 60;           // one sample per node this often; 0 = no watchdog at all
  std::int64_t idle_timeout_s = 0;        // end the job after this long idle (95) or hung (94); 0 = never
  bool interactive = false;               // `rv up`: warn at 80 % of the timeout; no hang verdict
  std::int64_t nvidia_smi_timeout_s = 10; // a hung nvidia-smi is killed after this long (no sample values)
};

// The request's watchdog directory on the cluster: `<node>.samples` per node (one line per sample:
// `t=<epoch> job=<id> util=<%,...> mem=<MiB,...> log=<bytes>`), `ended.<job id>` and
// `warning.<job id>`. `remote_root` is the resolved absolute root.
inline std::string watchdog_dir(std::string_view remote_root, std::string_view request_id)
{
  return std::string(remote_root) + "/requests/" + std::string(request_id) + "/watchdog";
}

} // namespace rv::templates
