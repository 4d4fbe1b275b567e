#include "core/model/plan.hpp"

#include "core/enum_names.hpp"

namespace rv::model {
namespace {

constexpr EnumNames<WindowSource, 4> k_window_source_names({{
    {WindowSource::none, ""},
    {WindowSource::probe, "probe"},
    {WindowSource::queue, "queue"},
    {WindowSource::probe_and_queue, "probe+queue"},
}});

// The replay's name changes whenever its model does (strategy/history.hpp).
constexpr EnumNames<WaitModel, 3> k_wait_model_names({{
    {WaitModel::none, ""},
    {WaitModel::plan, "plan"},
    {WaitModel::replay, "replay-2"},
}});

} // namespace

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

std::string_view to_string(WindowSource source)
{
  return k_window_source_names.name(source);
}

bool uses_queue(WindowSource source)
{
  return source == WindowSource::queue || source == WindowSource::probe_and_queue;
}

std::string_view to_string(WaitModel model)
{
  return k_wait_model_names.name(model);
}

} // namespace rv::model
