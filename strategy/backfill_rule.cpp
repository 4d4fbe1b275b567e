#include "strategy/backfill_rule.hpp"

#include <algorithm>
#include <cmath>

namespace rv::strategy {
namespace {

// Rounded down to the grid, also for times before the epoch (never in practice).
std::int64_t on_grid(std::int64_t epoch, std::int64_t resolution_s)
{
  const std::int64_t res = std::max<std::int64_t>(1, resolution_s);
  const std::int64_t q = epoch / res;
  return (epoch % res < 0 ? q - 1 : q) * res;
}

} // namespace

bool backfill_starts(std::int64_t start_epoch, std::int64_t limit_s, std::int64_t reservation_epoch,
                     std::int64_t resolution_s)
{
  return start_epoch + limit_s < on_grid(reservation_epoch, resolution_s);
}

std::int64_t measured_latency_s(double since_snapshot_s, double submit_trip_s)
{
  const double s = std::max(0.0, since_snapshot_s) + std::max(0.0, submit_trip_s);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(s)));
}

std::int64_t backfill_room_s(std::int64_t snapshot_epoch, std::int64_t until_s, const BackfillTiming& t)
{
  const std::int64_t latest_start =
      snapshot_epoch + std::max<std::int64_t>(0, t.latency_s) + std::max<std::int64_t>(0, t.interval_s);
  return on_grid(snapshot_epoch + until_s, t.resolution_s) - latest_start;
}

std::int64_t backfill_longest_limit_s(std::int64_t snapshot_epoch, std::int64_t until_s, const BackfillTiming& t)
{
  const std::int64_t room = backfill_room_s(snapshot_epoch, until_s, t);
  // Strictly before: a limit equal to the room does not start.
  const std::int64_t longest = room <= 0 ? 0 : (room - 1) / 60 * 60;
  return longest < 60 ? 0 : longest;
}

} // namespace rv::strategy
