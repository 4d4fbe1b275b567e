#pragma once
// Slurm's pending reasons, in one table: what each means in plain words, and whether waiting can
// ever clear it. The race (is_hopeless_reason), the live status and `rv ps` read this table.

#include <string>
#include <string_view>

namespace rv::slurm {

// The reason in plain words ("Resources" -> "waiting for free GPUs"); a reason the table does
// not know is returned as Slurm spells it; "" and "None" give "waiting to be scheduled".
std::string plain_reason(std::string_view reason);

// Tells whether a pending reason can never clear by waiting (a limit the job itself breaks,
// a bad account or constraint), as opposed to Resources, Priority or a per-user count limit.
bool is_hopeless_reason(std::string_view reason);

} // namespace rv::slurm
