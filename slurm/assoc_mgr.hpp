#pragma once
// `scontrol show assoc_mgr users=U flags=assoc`: the associations that apply to a user (their own
// and every parent account up to root), each group limit with what is used against it, as the
// controller enforces them: `GrpTRESMins=cpu=N(0),billing=60000(532)` is no cpu limit, a billing
// limit of 60000 TRES-minutes of which 532 are used.

#include "core/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// One set group limit.
struct AssocLimit {
  std::string name; // GrpTRESMins, GrpTRESRunMins, GrpTRES, GrpJobs, GrpSubmitJobs, GrpWall...
  std::string tres; // billing, gres/gpu, cpu, ... ("" for the scalar limits: GrpJobs, GrpWall)
  double limit = 0;
  double used = 0;
};

// One association record.
struct AssocUsage {
  std::string account;
  std::string user; // "" on an account's own association
  std::string partition;
  std::string parent;             // the parent account ("" for root)
  std::vector<AssocLimit> limits; // only limits that are set (not `N`)
};

// The argv rv runs: `scontrol show assoc_mgr users=USER flags=assoc`.
std::vector<std::string> assoc_mgr_argv(const std::string& user);

// Parses the records (the banner lines are skipped); limits printed as `N` are left out.
Result<std::vector<AssocUsage>> parse_assoc_mgr(std::string_view text);

} // namespace rv::slurm
