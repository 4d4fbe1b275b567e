#pragma once
// How a job runs its command in a container (docs/containers.md): the runtime discovery chose,
// the image, the mounts. Pure; rendered by templates/container.cpp.

#include "core/model/container.hpp"

#include <string>
#include <string_view>

namespace rv::templates {

// `--container` for one job on one cluster: what was asked and the runtime that runs it.
struct ContainerRun {
  model::ContainerOrder order;
  model::ContainerChoice choice;
  // The batch script pulls and checks the image but runs its own command on the node: `rv up`'s
  // holder (its shell or command joins as a step, in the container).
  bool prepare_only = false;
};

// The file a docker:// image is pulled to for Apptainer, relative to the cache root's
// `containers/images/`: the reference made safe for a file name plus a stable hash of it
// (`nvcr.io_nvidia_pytorch_24.05-py3-1a2b3c4d.sif`).
std::string pulled_image_name(std::string_view image);

// The line --dry-run shows for the step: the runtime and the command as it will run, e.g.
// `apptainer exec --nv --bind WORKDIR,SCRATCH,ROOT --pwd WORKDIR IMAGE bash -c "$RV_COMMAND"`
// or `srun ... --container-image=nvcr.io#nvidia/pytorch:24.05-py3 --container-name=rv-REQUEST-JOB
// --container-mounts=... bash -c ...`.
std::string describe_step(const ContainerRun& run, bool gpus, bool multi_node);

} // namespace rv::templates
