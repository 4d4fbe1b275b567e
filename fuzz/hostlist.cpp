// Hostlists: expansion stays under its bound, and compressing simple names expands back to them.
#include "slurm/hostlist.hpp"
#include "fuzz/fuzz.hpp"
#include "slurm/text.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

// A name compress_hostlist can write back: no hostlist syntax, and not a null marker ("None"
// alone is an empty list, so a list of just "None" does not expand back to it).
bool simple(const std::string& h)
{
  return !rv::slurm::text::is_null(h) && std::ranges::all_of(h, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

std::vector<std::string> sorted_unique(std::vector<std::string> v)
{
  std::ranges::sort(v);
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

} // namespace

RV_FUZZ_TARGET
{
  auto hosts = rv::slurm::expand_hostlist(rv::fuzz::text(data, size));
  if (!hosts) {
    return 0;
  }
  RV_FUZZ_CHECK(hosts->size() <= rv::slurm::max_hosts);
  if (hosts->size() > 10'000 || !std::ranges::all_of(*hosts, simple)) {
    return 0;
  }
  auto again = rv::slurm::expand_hostlist(rv::slurm::compress_hostlist(*hosts));
  RV_FUZZ_CHECK(again.has_value());
  RV_FUZZ_CHECK(sorted_unique(*again) == sorted_unique(*hosts));
  return 0;
}
