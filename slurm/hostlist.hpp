#pragma once
// Slurm hostlists: `gpu[01-03,07]`, `a[1-2],b3`, `n[1-2]-ib[3-4]`.

#include "core/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// Expands a hostlist into host names, keeping zero padding; `(null)` and "" give no hosts.
// Fails on unbalanced brackets, bad ranges, or more than a million hosts.
Result<std::vector<std::string>> expand_hostlist(std::string_view list);

// Compresses host names into a hostlist for display (`gpu[01-03,07],login1`); order of first
// appearance of each prefix is kept.
std::string compress_hostlist(const std::vector<std::string>& hosts);

} // namespace rv::slurm
