#pragma once
// Containers (docs/containers.md): what `--container` asks for, what a cluster offers, and which
// runtime runs the job. Plain data; the grammar and the choice are in core/container.hpp.

#include <string>
#include <vector>

namespace rv::model {

// How an image is named: `docker://REF`, an absolute `.sif` path, an absolute enroot squashfs
// (`.sqsh`, `.squashfs`) path.
enum class ImageKind { docker, sif, squashfs };

struct ContainerImage {
  ImageKind kind = ImageKind::docker;
  std::string text; // as typed: docker://nvcr.io/nvidia/pytorch:24.05-py3, /scratch/img.sif
};

// One --container-mount: SRC (on the node) at DST (in the container), both absolute.
struct ContainerMount {
  std::string src;
  std::string dst;
  bool read_only = false;
};

// What `rv run|up --container IMAGE [--container-mount ...]` asks for.
struct ContainerOrder {
  ContainerImage image;
  std::vector<ContainerMount> mounts;
};

// The container runtimes a cluster offers, from discovery's probe on the login node
// (slurm/containers.hpp). Pyxis: srun's SPANK options; Apptainer (or its older name Singularity):
// a program on PATH.
struct ContainerSupport {
  bool probed = false;           // the probe answered (false: unknown, e.g. it failed)
  bool pyxis = false;            // srun --container-image works
  std::string pyxis_evidence;    // "srun --help" or the plugstack file that names pyxis
  bool pyxis_env = false;        // srun --help lists --container-env (newer Pyxis: the host's value wins)
  std::string apptainer;         // the program: "apptainer", "singularity", or "" = none
  std::string apptainer_path;    // where `command -v` found it
  std::string apptainer_version; // its --version line
  bool enroot = false;           // enroot on PATH (Pyxis runs it; rv does not call it itself)
};

// The runtime a job runs its container with.
enum class ContainerRuntime { pyxis, apptainer };

// The `container_runtime` setting: auto (discovery chooses) or one runtime forced.
enum class RuntimeSetting { automatic, pyxis, apptainer, singularity };

// The choice for one job on one cluster.
struct ContainerChoice {
  ContainerRuntime runtime = ContainerRuntime::apptainer;
  std::string program; // apptainer: "apptainer" or "singularity"; pyxis: "" (srun's options)
  std::string why;     // for --dry-run: "found by discovery (srun --help)", "container_runtime = pyxis"
  // Pyxis: srun offers --container-env, so the job's value of the variables rv sets wins over the
  // image's ENV (docs/containers.md, "The image's ENV").
  bool pyxis_env = false;
};

} // namespace rv::model
