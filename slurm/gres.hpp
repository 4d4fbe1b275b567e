#pragma once
// GPU counts from GRES strings (`gpu:a100:8(S:0-1)`) and TRES strings (`gres/gpu:a100=4`).

#include "core/model/cluster.hpp"
#include "core/result.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// Parses a GRES list into GPU entries, one per type (counts of a repeated type are summed);
// non-GPU GRES (shard, mps, gpfs:...) and zero counts are left out; `(null)`/"" give none.
// A last token cut off by a column width (`gpu:h10`) is dropped; a malformed GPU token
// elsewhere is an error, as are counts adding up past an int and a type name longer than
// model::max_gpu_type_length.
Result<std::vector<model::GpuGres>> parse_gres(std::string_view gres);

// Parses a TRES list (`cpu=4,mem=8G,gres/gpu:a100=4,gres/gpu=4`) into GPU entries: typed
// entries win; an untyped total larger than their sum adds an untyped remainder.
// Also accepts the legacy TresPerNode form without the `gres/` prefix (`gpu:tesla:4`).
// Fails, as parse_gres does, on counts adding up past an int or an over-long type name.
Result<std::vector<model::GpuGres>> parse_tres_gpus(std::string_view tres);

// Splits a TRES list into key -> value as printed (`billing` -> "112"); `+` truncation marks
// are removed; null values give an empty map.
std::map<std::string, std::string> parse_tres_map(std::string_view tres);

// Sums the counts of a GPU list; the sum for a list parse_gres or parse_tres_gpus gave fits an int.
int total_gpus(const std::vector<model::GpuGres>& gpus);

} // namespace rv::slurm
