#pragma once
// The site profile: what Slurm cannot tell rv (aliases, VRAM, interconnects, SU conversion, free
// types, per-user caps). The CLI reads the file; this parses its text. Documented in docs/profile.md.

#include "core/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::strategy {

// What the profile says about one Slurm GRES type.
struct GpuTypeInfo {
  std::optional<int> vram_gb;            // memory per GPU (per slice for MIG-like types)
  bool nvlink = false;                   // GPUs in a node are NVLink-connected
  bool infiniband = false;               // nodes of this type share an InfiniBand fabric
  std::optional<double> su_per_gpu_hour; // used only where the partition has no billing weights
  bool free = false;                     // costs 0 SU (e.g. a free MIG partition)
  std::optional<bool> mig;               // overrides the name-pattern MIG detection
  std::optional<int> max_gpus_per_user;  // site cap for this type, across the user's jobs
};

// `a100` -> GRES types and/or a partition and constraint.
struct GpuAlias {
  std::vector<std::string> types; // GRES types this alias means; empty = every type that matches
  std::string partition;          // restricts to this partition when set
  std::string constraint;         // --constraint added to every strategy, e.g. "gpupod&a100_80gb"
};

struct Profile {
  std::map<std::string, GpuAlias> aliases;
  std::map<std::string, GpuTypeInfo> types; // key: exact GRES type
  double su_per_billing_hour = 1.0;         // SU = billing units x hours x this
  std::optional<int> max_gpus_per_user;     // site cap across types
  std::string default_account;
  // A shell command line the login node runs for the user's storage quota (`rv status` shows its
  // output as it is, `rv doctor` checks the workspace with it); "" = the site has none.
  std::string quota_command;
  std::string mig_pattern = R"(\d+g\.\d+gb)"; // ECMAScript regex, matched against the whole type
  std::string preflight_command;              // the site's own in-job check (bash, each node); "" = none
  bool preflight_required = false;            // a node where the preflight cannot run fails it
  std::string container_image;                // `rv doctor`: an image to test GPUs in a container with
  // Returns the profile's info for `type`, or nullptr.
  const GpuTypeInfo* find(const std::string& type) const;
};

// Parses the JSON text of a profile file. Keys starting with `_` are comments. Unknown keys,
// wrong types and bad values are config errors naming the key (with a did-you-mean hint).
Result<Profile> parse_profile(std::string_view json_text);

} // namespace rv::strategy
