#pragma once
// The static half of discovery, for rv's per-host cache (docs/discovery-cache.md): which of
// discovery_commands read facts that rarely change, the cheap check that they still hold, and the
// merge of a fresh dynamic half into cached static facts. Pure; the cache file is app/'s.

#include "core/model/cluster.hpp"
#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <string>
#include <vector>

namespace rv::slurm {

// Whether `cmd` (one of discovery_commands) reads facts that rarely change: `scontrol show node`
// (its static fields: CPUs, memory, GRES, features; the dynamic ones come from sinfo),
// `scontrol show config`, `readlink /etc/localtime`, the container runtime probe and sacctmgr. Everything else, sinfo,
// `scontrol show partition`, `date` and any command not named here, is dynamic: read every time.
bool is_static_discovery(const proc::Command& cmd);

// The config stamp: slurm.conf's mtime, size and inode ($SLURM_CONF, else /etc/slurm/slurm.conf),
// or "none" (a configless login node). No RPC: a stat on the login node.
proc::Command config_stamp_command();

// The fingerprint of the static facts, from the dynamic half that is read anyway: every partition
// line of `scontrol -o show partition` (found in `cmds`, answered in `outcomes`) without its State=
// (nodes, limits, billing weights, GPU TRES totals, which change when a node's GRES does), and the
// config stamp's answer.
std::string static_fingerprint(const std::vector<proc::Command>& cmds, const std::vector<proc::Outcome>& outcomes,
                               const proc::Outcome& stamp);

// The nodes as sinfo (found in `cmds`) shows them in `outcomes`: the fresh dynamic half.
Result<std::vector<model::Node>> sinfo_nodes(const std::vector<proc::Command>& cmds,
                                             const std::vector<proc::Outcome>& outcomes);

// Why the cached nodes no longer describe the fresh ones (sinfo's view: names, CPUs, memory,
// GPUs per type, features), or "" when they still do.
std::string nodes_changed(const std::vector<model::Node>& cached, const std::vector<model::Node>& fresh);

// Copies the dynamic fields of each `fresh` node (state, flags, usable, allocated CPUs, memory and
// GPUs, reason) onto the node of `cluster` with the same name.
void refresh_dynamic(model::Cluster& cluster, const std::vector<model::Node>& fresh);

} // namespace rv::slurm
