#pragma once
// Read-only views of a request record's free-form nested fields (`sync`, `plan`), read by type: a
// record whose nested fields have odd shapes reads as defaults and never hides the others (N5).
// The `refanout` field's lines: app/refanout.hpp.

#include "app/request/requests.hpp"

#include <string>

namespace rv::app {

// "  [main@3f9c02a*]" from the request's sync record ("*": uncommitted changes), or "".
std::string git_label(const RequestRecord& r);

// The request's state for a table; a member of a race across clusters that another member won
// reads "lost", not "cancelled": nothing went wrong with it (ux-review-3 N9).
std::string state_label(const RequestRecord& r);

// Where a job is, for `rv ps`: its node(s) and run time once it has started; else sbatch's
// refusal; else, while it pends, its reason in plain words with Slurm's code (`other jobs are ahead
// in the queue (Priority)`) and Slurm's start estimate. A job that ended without starting (a
// cancelled sibling) shows neither: they were true while it pended (ux-review-3, stale reasons).
std::string job_detail(const JobRecord& j);

// The service units the plan estimated for strategy `strategy_id`, 0 when unknown.
double planned_su(const RequestRecord& rec, const std::string& strategy_id);

} // namespace rv::app
