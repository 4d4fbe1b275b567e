#include "slurm/gpu_faults.hpp"

#include <doctest/doctest.h>

using rv::slurm::find_gpu_fault;

TEST_CASE("GPU fault signatures are found in real error lines, not in ordinary failures")
{
  CHECK(
      find_gpu_fault("RuntimeError: CUDA error: unknown error\nCUDA kernel errors might be asynchronously reported") ==
      "cuda error: unknown error");
  CHECK(find_gpu_fault("Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error") != "");
  CHECK(find_gpu_fault("NVRM: GPU at PCI:0000:3b:00: GPU has fallen off the bus.") != "");
  CHECK(find_gpu_fault("torch.distributed.DistBackendError: NCCL error: unhandled system error") != "");
  CHECK(find_gpu_fault("pynvml.NVMLError_Unknown: Unknown Error") != "");
  CHECK(find_gpu_fault("Traceback...\nKeyError: 'lr'\n").empty());
  CHECK(find_gpu_fault("torch.OutOfMemoryError: CUDA out of memory.").empty());
  CHECK(find_gpu_fault("").empty());
}
