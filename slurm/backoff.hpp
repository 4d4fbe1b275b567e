#pragma once
// The one polling cadence of rv. Every loop that asks Slurm about jobs over and over (the race,
// following a job, waiting for a request to start) sleeps what a Backoff says: `initial` first,
// then `factor` times longer after each poll, never above `max`. reset() starts over (something
// changed, e.g. the next checkpoint segment). Polls are RPCs to slurmctld: a cluster of many rv
// users must not see more than one every `max` per watched request once things settle.

#include <algorithm>
#include <chrono>

namespace rv::slurm {

class Backoff {
public:
  using ms = std::chrono::milliseconds;
  struct Policy {
    ms initial{1000};
    ms max{5000};
    double factor = 2.0;
  };

  // The race: 1 s, then 1.3 times longer up to every 5 s (a start is seen within seconds).
  static constexpr Policy racing() { return {ms(1000), ms(5000), 1.3}; }
  // Settling a race across clusters (app/run/launch/cluster_race.hpp): 0.5 s, then 1.5 times longer
  // up to every 5 s. A started job waits at its gate, GPUs idle, until a poll sees it; on a free
  // cluster that is within a second of the submission.
  static constexpr Policy settling() { return {ms(500), ms(5000), 1.5}; }
  // Waiting for a request to start (rv logs -f): 1 s, 2 s, 4 s, then every 5 s.
  static constexpr Policy waiting() { return {ms(1000), ms(5000), 2.0}; }
  // Following a running job's log: 1 s, 2 s, then every 3 s (output should feel live).
  static constexpr Policy following() { return {ms(1000), ms(3000), 2.0}; }

  explicit Backoff(Policy p = waiting()) : m_policy(p), m_next(p.initial) {}

  // The wait before the next poll; the one after it grows.
  ms next()
  {
    const ms now = m_next;
    m_next = std::min(m_policy.max, ms(static_cast<ms::rep>(static_cast<double>(m_next.count()) * m_policy.factor)));
    return now;
  }
  void reset() { m_next = m_policy.initial; }
  const Policy& policy() const { return m_policy; }

private:
  Policy m_policy;
  ms m_next;
};

} // namespace rv::slurm
