#pragma once
// Which container runtimes a cluster offers (docs/containers.md): one probe on the login node that
// rides in discovery's round trip (slurm/discover.hpp) and is cached with the other static facts,
// and its parser. Pyxis is a SPANK plugin of srun: found when `srun --help` lists
// --container-image, or when the PlugStackConfig file (or a file it includes) loads pyxis.
// Apptainer/Singularity: `command -v apptainer`, else `singularity`.

#include "core/model/container.hpp"
#include "core/process/runner.hpp"

#include <string_view>

namespace rv::slurm {

// The probe: `sh -c SCRIPT`, concurrent and read-only; it prints key=value lines.
proc::Command container_probe_command();

// Reads the probe's answer. A failed probe (no answer) is `probed = false`, never an error:
// containers are not needed to plan.
model::ContainerSupport parse_container_probe(const proc::Outcome& outcome);

// Whether `cmd` is the probe (discovery caches it with the static facts).
bool is_container_probe(const proc::Command& cmd);

} // namespace rv::slurm
