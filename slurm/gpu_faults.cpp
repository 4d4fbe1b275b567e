#include "slurm/gpu_faults.hpp"

#include "core/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

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

namespace rv::slurm {

std::optional<PreflightFailure> find_preflight_failure(std::string_view text)
{
  constexpr std::string_view k_marker = "rv preflight: FAIL node=";
  const auto at = text.rfind(k_marker);
  if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n')) {
    return std::nullopt;
  }
  auto line = text.substr(at + k_marker.size());
  line = line.substr(0, line.find('\n'));
  while (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  PreflightFailure f;
  const auto space = line.find(' ');
  f.node = std::string(line.substr(0, space));
  if (space != std::string_view::npos) {
    auto rest = line.substr(space + 1);
    constexpr std::string_view k_scope = "scope=request ";
    if (rest.starts_with(k_scope)) {
      f.whole_request = true;
      rest.remove_prefix(k_scope.size());
    }
    constexpr std::string_view k_reason = "reason=";
    f.reason = std::string(rest.starts_with(k_reason) ? rest.substr(k_reason.size()) : rest);
  }
  if (f.node.empty()) {
    return std::nullopt;
  }
  return f;
}

} // namespace rv::slurm
