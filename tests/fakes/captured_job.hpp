#pragma once
// A captured testbed answer (scontrol show job, COMPLETED, ExitCode=0:0) renumbered and given
// another state and exit code, for tests that follow a job to its end.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace rv::test {

inline std::string scontrol_job(const std::string& id, const std::string& state, const std::string& exit_code)
{
  std::ifstream in(std::filesystem::path(RV_TEST_DATA_DIR) / "slurm" / "22.05" / "scontrol_show_job.completed.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto swap = [&](const std::string& from, const std::string& to) {
    auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    text.replace(pos, from.size(), to);
  };
  swap("JobId=2 ", "JobId=" + id + " ");
  swap("JobState=COMPLETED", "JobState=" + state);
  swap("ExitCode=0:0", "ExitCode=" + exit_code);
  return text;
}

} // namespace rv::test
