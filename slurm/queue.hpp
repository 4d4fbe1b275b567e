#pragma once
// The scheduler's queue for rv's window model (strategy/window_model.hpp): the cluster's clock and
// one `squeue` of the running and pending jobs with their nodes, GPUs per node, limit ends,
// priority, and the start and nodes backfill planned for them (%S, %Y). One RPC to slurmctld;
// the two commands join the discovery batch, so they cost no round trip of their own.

#include "core/model/cluster.hpp"
#include "core/model/queue.hpp"
#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "slurm/discover.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace rv::slurm {

// %N is the allocation of a running job, %Y the nodes backfill planned for a pending one.
inline constexpr std::string_view queue_format = "%i|%T|%P|%D|%Q|%S|%e|%b|%N|%Y|%r|%j";

// `date '+%s %z'`, then `env SLURM_TIME_FORMAT=standard squeue -h -t PD,R,CG -o <queue_format>`.
std::vector<proc::Command> queue_commands();

// Reads the outputs of queue_commands. Never fails: a queue it cannot read gives `known` false
// and a note (the planner then goes by the probes alone); a row it cannot read is skipped with one.
model::QueueSnapshot parse_queue(std::string_view date_out, std::string_view squeue_out);
// The same from queue_commands' outcomes, in their order (a batch's answers to them).
model::QueueSnapshot parse_queue(std::span<const proc::Outcome> answers);

} // namespace rv::slurm
