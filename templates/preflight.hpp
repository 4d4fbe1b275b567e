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

} // namespace rv::templates
