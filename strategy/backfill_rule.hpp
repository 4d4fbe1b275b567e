#pragma once
// The rule by which Slurm's backfill sizes the window in front of a reservation, as captured on
// the local clusters (Slurm 22.05.8 and 24.11.5; testbed/capture_backfill_rule.sh,
// tests/data/slurm/<version>/backfill_rule/, docs/slurm-quirks.md):
//   * backfill reserves the nodes of a pending job from its planned start R rounded DOWN to
//     bf_resolution's grid (absolute epoch seconds: floor(R / res) * res);
//   * a job there starts only when it ends strictly before that: start + limit < floor(R/res)*res;
//   * it starts at the first backfill pass after its submission (0-1 s after sbatch at
//     bf_interval=2), so a job submitted `latency` after the snapshot starts by
//     snapshot + latency + bf_interval;
//   * with --time-min, the same test applies to the minimum, and the limit granted is the minimum
//     (not stretched to the window).
// Pure.

#include <cstdint>

namespace rv::strategy {

struct BackfillTiming {
  std::int64_t resolution_s = 60; // bf_resolution
  std::int64_t interval_s = 30;   // bf_interval: the longest wait for the next backfill pass
  std::int64_t latency_s = 30;    // rv's own time from the queue snapshot to the accepted sbatch
};

// Seconds a job started by backfill may run in a window that closes `until_s` after a queue
// snapshot taken at `snapshot_epoch` (the window's closing job's planned start): from the latest
// start (snapshot + latency + interval) to the reservation on its grid. Negative: none.
std::int64_t backfill_room_s(std::int64_t snapshot_epoch, std::int64_t until_s, const BackfillTiming& t);

// The longest limit in whole minutes that backfill starts in such a window (it must end strictly
// before the reservation); 0 when not even a minute does.
std::int64_t backfill_longest_limit_s(std::int64_t snapshot_epoch, std::int64_t until_s, const BackfillTiming& t);

// rv's latency from the queue snapshot to the accepted sbatch, from what this command measured:
// the time since the snapshot's round trip began and one more trip for the submission, in whole
// seconds (at least 1).
std::int64_t measured_latency_s(double since_snapshot_s, double submit_trip_s);

// Whether a job of `limit_s` submitted at `submit_epoch` (started at the next pass, `start_epoch`)
// fits in front of a reservation planned at `reservation_epoch`: what backfill decides.
bool backfill_starts(std::int64_t start_epoch, std::int64_t limit_s, std::int64_t reservation_epoch,
                     std::int64_t resolution_s);

} // namespace rv::strategy
