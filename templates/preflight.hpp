#pragma once
// The job-side GPU check of the preflight (docs/preflight.md), for other job scripts that want the
// same check (`rv doctor`'s test job). Pure.

#include <string>

namespace rv::templates {

// Bash that defines `_rv_pf_node` (and its helper): run on a node inside a job, it prints one
// line `rv preflight: ok|skip|FAIL node=NODE ...` and returns 1 when the node failed.
// `site_check` is the site profile's own check command ("" = none); `required` makes a node
// without nvidia-smi fail instead of being skipped.
std::string preflight_node_script(const std::string& site_check, bool required);

// Where a job's preflight leaves its verdict, the `rv preflight: FAIL` line, when a node failed:
// `<remote_root>/requests/<id>/preflight.<job id>`. Only the preflight writes it; rv re-fans out
// only when it is there (exit 96 alone may be the user's command's own status).
std::string preflight_verdict_path(const std::string& remote_root, const std::string& request_id,
                                   const std::string& job_id);

} // namespace rv::templates
