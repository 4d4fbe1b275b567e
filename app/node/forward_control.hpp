#pragma once
// `rv forward`'s running forwards: starting one (in this process, or in a background rv that
// outlives the command), listing those whose rv still runs, and stopping them. cli parses the
// flags and prints; the records, the locks and the daemon live here (docs/forward.md).

#include "app/env.hpp"
#include "app/node/forward.hpp"
#include "app/node/job_target.hpp"
#include "core/store/record_store.hpp"

#include <functional>
#include <vector>

namespace rv::app {

// The forwards' records, beside the requests' (`<state dir>/forwards`).
store::RecordStore forward_store(const store::RecordStore& requests);

// The forwards whose rv still runs (it holds its lock: a pid alone may be another process's by
// now); the records of dead ones are removed, and nothing is ever signalled for them.
Result<std::vector<ForwardRecord>> live_forwards(store::RecordStore& store);

// Refuses local port `local` when a running forward listens there (a usage error naming it).
Result<void> require_free_port(store::RecordStore& store, int local);

// Stops the forward on local port `port` (every running one when 0): SIGTERM, its record removed,
// `stopped` told of each as it goes. A `port` no forward listens on is a usage error; one that
// does not stop is an error (those stopped before it stay stopped). Returns those stopped.
Result<std::vector<ForwardRecord>> stop_forwards(store::RecordStore& store, int port,
                                                 const std::function<void(const ForwardRecord&)>& stopped);

struct ForwardStart {
  int local_port = 0;  // 127.0.0.1:local_port
  int remote_port = 0; // on the job's node
  bool foreground = false;
};

// Listens on 127.0.0.1:local_port and carries it to the node of `target` until the job ends.
// Foreground: in this process (Ctrl-C stops it); returns 130 when interrupted before the job
// ended, else 0. Background: a detached rv holds the forward (its record, lock and log in
// `store`), and this process leaves at once with exit 0 without closing the SSH session, which is
// the child's now. `started` is told of the running forward either way (its pid and log filled in).
Result<int> start_forward(Env& env, store::RecordStore& store, const NodeTarget& target, const ForwardStart& how,
                          const std::function<void(const ForwardRecord&)>& started);

} // namespace rv::app
