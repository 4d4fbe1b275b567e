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

TEST_CASE("find_preflight_failure reads the preflight's FAIL line: node and reason")
{
  using rv::slurm::find_preflight_failure;
  auto f = find_preflight_failure("rv: claimed\nrv preflight: FAIL node=a100-1 reason=nvidia-smi: No devices were "
                                  "found\nrv: preflight failed: the command does not run here\n");
  REQUIRE(f.has_value());
  CHECK(f->node == "a100-1");
  CHECK(f->reason == "nvidia-smi: No devices were found");
  // Multi-node: the batch shell repeats each node's line; the last FAIL counts.
  f = find_preflight_failure("rv preflight: ok node=a100-1 gpus=8/8 driver=535.104.05 time_ms=80\n"
                             "rv preflight: FAIL node=a100-2 reason=driver 550.54.15 differs from 535.104.05 on "
                             "a100-1\r\n");
  REQUIRE(f.has_value());
  CHECK(f->node == "a100-2");
  CHECK(f->reason == "driver 550.54.15 differs from 535.104.05 on a100-1");
  CHECK_FALSE(find_preflight_failure("rv preflight: ok node=a100-1 gpus=1/1\n").has_value());
  CHECK_FALSE(find_preflight_failure("echo rv preflight: FAIL node=x reason=user text\n").has_value());
  CHECK_FALSE(find_preflight_failure("rv preflight: FAIL node= reason=empty\n").has_value());
  CHECK_FALSE(find_preflight_failure("").has_value());
  // A container image every node would fail (docs/containers.md): the whole request, not the node.
  f = find_preflight_failure("rv preflight: FAIL node=a100-1 scope=request reason=apptainer pull x failed: FATAL: "
                             "manifest unknown\n");
  REQUIRE(f.has_value());
  CHECK(f->whole_request);
  CHECK(f->node == "a100-1");
  CHECK(f->reason == "apptainer pull x failed: FATAL: manifest unknown");
  CHECK_FALSE(find_preflight_failure("rv preflight: FAIL node=a reason=x\n")->whole_request);
}
