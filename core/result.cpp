#include "core/result.hpp"

namespace rv {

int exit_code_for(ErrorCode code)
{
  switch (code) {
  case ErrorCode::usage:
  case ErrorCode::config:
    return 2;
  case ErrorCode::slurm_rejected:
    return 3;
  case ErrorCode::no_strategy:
    return 4;
  case ErrorCode::timeout:
    return 124;
  case ErrorCode::interrupted:
    return 130;
  case ErrorCode::host_key_changed:
    return 252;
  case ErrorCode::host_key_unknown:
    return 253;
  case ErrorCode::auth_failed:
    return 254;
  case ErrorCode::unreachable:
    return 255;
  case ErrorCode::generic:
  case ErrorCode::parse:
  case ErrorCode::io:
    return 1;
  }
  return 1;
}

} // namespace rv
