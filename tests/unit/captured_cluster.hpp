#pragma once
// The cluster discovery makes of the outputs captured on the 24.11 testbed cluster
// (tests/data/slurm/24.11, testbed/capture.sh): for the parser tests and the planner's.

#include "slurm/discover.hpp"
#include "unit/test_data.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace rv::testing {

inline model::Cluster captured_cluster_24_11()
{
  const auto dir = std::filesystem::path(RV_TEST_DATA_DIR) / "slurm" / "24.11";
  auto out = [&](const char* file) {
    proc::Outcome o;
    o.exit_code = 0;
    o.out = read_data(dir / file);
    return o;
  };
  auto text = [](std::string s) {
    proc::Outcome o;
    o.exit_code = 0;
    o.out = std::move(s);
    return o;
  };
  proc::Outcome no_sinfo;
  no_sinfo.exit_code = 1;
  // discovery_commands' order: sinfo, partitions, nodes, config, date, zone, containers, assoc, qos, user.
  auto c = slurm::parse_discovery({no_sinfo, out("scontrol_show_partition.txt"), out("scontrol_show_node.idle.txt"),
                                   out("scontrol_show_config.txt"), text("+0000 UTC\n"),
                                   text("/usr/share/zoneinfo/Etc/UTC\n"), text(""), out("sacctmgr_show_assoc.txt"),
                                   out("sacctmgr_show_qos.txt"), text("rvacct\n")});
  REQUIRE_MESSAGE(c.has_value(), (c ? "" : c.error().message));
  return *c;
}

} // namespace rv::testing
