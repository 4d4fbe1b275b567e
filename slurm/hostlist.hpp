#pragma once
// Slurm hostlists: `gpu[01-03,07]`, `a[1-2],b3`, `n[1-2]-ib[3-4]`.

#include "core/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// The most host names one hostlist may expand to; parsers that expand many lists from one
// output (a row per node, a record per partition) bound their total by it too.
inline constexpr std::size_t max_hosts = 100'000;

// Expands a hostlist into host names, keeping zero padding; `(null)` and "" give no hosts.
// Fails, before expanding, on unbalanced brackets, bad ranges, numbers of more than 18 digits,
// names longer than 255 characters, more than 16 bracket groups in one name, or more than a
// million hosts in all.
Result<std::vector<std::string>> expand_hostlist(std::string_view list);

// Compresses host names into a hostlist for display (`gpu[01-03,07],login1`); order of first
// appearance of each prefix is kept.
std::string compress_hostlist(const std::vector<std::string>& hosts);

} // namespace rv::slurm
