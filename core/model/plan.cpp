#include "core/model/plan.hpp"

namespace rv::model {

const char* to_string(StrategyKind kind)
{
  switch (kind) {
  case StrategyKind::direct:
    return "direct";
  case StrategyKind::backfill:
    return "backfill";
  case StrategyKind::time_min:
    return "time-min";
  case StrategyKind::checkpoint:
    return "checkpoint";
  }
  return "direct";
}

} // namespace rv::model
