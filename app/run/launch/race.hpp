#pragma once
// Racing a submitted request's siblings.

#include "app/env.hpp"
#include "app/run/launch/submit.hpp"
#include "app/run/show/follow.hpp"
#include "app/run/show/live_status.hpp"

#include <optional>

namespace rv::app {

// Races the submitted siblings: the first to start wins, the others are cancelled (by id and job
// name), Ctrl-C or an error cancels everything and removes the secrets file. Returns the
// winner's job record (its strategy id is also in `l.rec.winner`); the record is saved on every
// change. `live` shows each poll's view of the siblings (and, with events, the cancellations and
// the winner); its block is removed when the race ends.
// `defer` (rv run -f): the winner's node read (the GPU-type check), when the losers' scancel did
// not carry it, is handed over for the follow's first round trip instead of costing one now.
Result<JobRecord> race_request(Env& env, Launched& l, LiveStatus& live, std::optional<AlongRead>* defer = nullptr);
// The same with a status of its own, without events.
Result<JobRecord> race_request(Env& env, Launched& l);

} // namespace rv::app
