#pragma once
// A temp dir holding a node `n1` of the testbed's stand-in nvidia-smi (testbed/nvidia-smi, real
// formats): the preflight's and the container check's tests run rendered scripts against it.

#include "exec_fixture.hpp"

#include "templates/preflight.hpp"

#include <filesystem>
#include <string>

namespace rv::templates::testing {

// A temp dir holding a node `n1` of the stand-in nvidia-smi (TB_DIR layout) with `gpus` lines.
struct FakeNode : ExecFixture {
  explicit FakeNode(const std::string& gpus)
  {
    std::filesystem::create_directories(dir / "bin");
    std::filesystem::create_directories(dir / "gpu" / "n1");
    // The stand-in is kept without its executable bit in git; up.sh installs it (docs/testbed.md).
    rv::testing::write_text(path("bin/nvidia-smi"),
                            "#!/bin/bash\nexec bash '" RV_SOURCE_DIR "/testbed/nvidia-smi' \"$@\"\n");
    std::filesystem::permissions(dir / "bin" / "nvidia-smi", std::filesystem::perms::owner_all);
    rv::testing::write_text(path("gpu/n1/gpus"), gpus);
  }
  void set(const std::string& file, const std::string& value) const
  {
    rv::testing::write_text(path("gpu/n1/" + file), value + "\n");
  }
  // Runs the node check with `vars` (NAME=value words); returns the exit status, output in `out`.
  int check(const std::string& vars, const std::string& site_check = "", bool required = false,
            bool with_nvidia_smi = true)
  {
    auto script = write_script("check", preflight_node_script(site_check, required) + "\n_rv_pf_node\n");
    const std::string path_var = with_nvidia_smi ? path("bin") + ":/usr/bin:/bin" : "/usr/bin:/bin";
    return sh("env -i PATH='" + path_var + "' TB_DIR='" + dir.string() + "' SLURMD_NODENAME=n1 " + vars + " bash '" +
              script + "' >'" + path("out") + "' 2>&1");
  }
  std::string out() const { return read("out"); }
};

} // namespace rv::templates::testing
