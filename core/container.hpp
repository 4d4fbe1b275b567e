#pragma once
// The grammar of `--container IMAGE`, `--container-mount SRC:DST[:ro]` and the
// `container_runtime` setting, and the choice of a runtime from what discovery found
// (docs/containers.md). Pure.

#include "core/model/container.hpp"
#include "core/result.hpp"

#include <string>
#include <string_view>

namespace rv {

// `docker://REF`, or an absolute path ending in `.sif`, `.sqsh` or `.squashfs`; anything else
// (a bare name, a relative path, another scheme) is a usage error with a hint.
Result<model::ContainerImage> parse_container_image(std::string_view text);

// `SRC:DST` or `SRC:DST:ro` (`:rw` too), both absolute; no `,` (both runtimes separate mounts
// with it), no further `:` and no line break or NUL.
Result<model::ContainerMount> parse_container_mount(std::string_view text);

// The `container_runtime` setting: auto, pyxis, apptainer, singularity.
Result<model::RuntimeSetting> parse_runtime_setting(std::string_view text);
std::string_view to_string(model::RuntimeSetting setting);
std::string_view to_string(model::ContainerRuntime runtime);

// The runtime that runs `image` on a cluster offering `offered`: the setting when it names one,
// else Pyxis when offered (Slurm's own steps), else Apptainer/Singularity. A `.sif` needs
// Apptainer. An error (usage, with a hint) when nothing fits.
Result<model::ContainerChoice> choose_container_runtime(model::RuntimeSetting setting,
                                                        const model::ContainerSupport& offered,
                                                        const model::ContainerImage& image);

// The image as Pyxis's --container-image takes it: `docker://nvcr.io/nvidia/pytorch:24.05-py3`
// is `nvcr.io#nvidia/pytorch:24.05-py3` (enroot's registry separator), `docker://ubuntu:22.04`
// is `ubuntu:22.04`; a path stays a path.
std::string pyxis_image(const model::ContainerImage& image);

// One line for `rv status` and `rv doctor`: "pyxis (srun --help), apptainer 1.3.4
// (/usr/bin/apptainer)", or "none found" / "unknown (the probe failed)".
std::string describe(const model::ContainerSupport& offered);

} // namespace rv
