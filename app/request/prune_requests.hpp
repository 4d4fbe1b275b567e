#pragma once
// Finished requests leave state on the cluster: `<remote_root>/requests/<id>/` (the `prepared`
// marker, the claim, `started.N`, `next.<job>`, the preflight's verdict, the watchdog's samples) and
// their jobs' logs. `rv ps` removes both once a finished request is `request_keep` old (N15), so
// thousands of requests do not fill a small home quota. The local record stays (`rv ps -a`),
// stamped `pruned_at`.

#include "app/request/requests.hpp"
#include "core/clock.hpp"
#include "core/process/runner.hpp"
#include "core/store/record_store.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// Whether `r`'s remote state may go now (pure): it has ended (every job terminal, a final state),
// it is `keep_s` old or older (0 = never), not pruned yet, and its paths are absolute.
bool prunable(const RequestRecord& r, std::int64_t now_s, std::int64_t keep_s);

// The command that removes the remote state of `requests` (prunable ones): their request
// directories and their jobs' logs (`<name>-<job>.out|.err`, per-node logs too).
proc::Command prune_command(const std::vector<const RequestRecord*>& requests);

// Removes the remote state of every prunable request in `requests` in one command and stamps
// them `pruned_at`; a failure is logged, not returned (the next `rv ps` tries again).
void prune_remote_state(proc::Runner& runner, Clock& clock, store::RecordStore& store,
                        const std::vector<RequestRecord*>& requests, std::int64_t keep_s);

} // namespace rv::app
