#pragma once
// `sshare` fair-share rows (parsable or the default table).

#include "core/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// One association row.
struct SshareRow {
  std::string account;    // leading blanks (the tree indentation) removed
  std::string user;       // "" on account rows
  std::string raw_shares; // a number or `parent`
  std::optional<double> norm_shares, effective_usage, fair_share;
  std::optional<double> raw_usage;
};

// The argv rv runs: `sshare -P -n -U -o Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare`.
std::vector<std::string> sshare_argv();

// Parses rv's parsable order, or a default table with its header.
Result<std::vector<SshareRow>> parse_sshare(std::string_view text);

} // namespace rv::slurm
