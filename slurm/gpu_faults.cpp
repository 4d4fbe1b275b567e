#include "slurm/gpu_faults.hpp"

#include "core/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace rv::slurm {

std::string find_gpu_fault(std::string_view text)
{
  // Lower-case needles; what each means is in docs/exit-codes.md (hardware retry).
  static constexpr std::array<std::string_view, 9> k_signatures = {
      "cuda error: unknown error",          "cudaerrorunknown",       "unable to determine the device handle",
      "failed to get device handle",        "has fallen off the bus", "uncorrectable ecc error",
      "nccl error: unhandled system error", "nvmlerror_unknown",      "cuda error: no cuda-capable device is detected",
  };
  const auto lower = rv::text::lower(text);
  for (auto sig : k_signatures) {
    if (lower.find(sig) != std::string::npos) {
      return std::string(sig);
    }
  }
  return {};
}

} // namespace rv::slurm
