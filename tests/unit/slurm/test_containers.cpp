// The container runtime probe (slurm/containers.hpp): its script run for real with sh against
// fake srun/apptainer/singularity programs and plugstack files in a temp dir (tests/data/containers:
// srun --help with and without Pyxis), and its parser.

#include "slurm/containers.hpp"

#include "core/container.hpp"

#include "unit/templates/golden.hpp"
#include "unit/test_data.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace rv;
namespace fs = std::filesystem;

namespace {

// A login node in a temp dir: only the tools the probe uses on PATH, plus the fakes asked for.
struct ProbeNode {
  fs::path dir;

  ProbeNode()
  {
    static int counter = 0;
    dir = fs::temp_directory_path() /
          ("rv-containers-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir / "bin");
    fs::create_directories(dir / "etc" / "plugstack.conf.d");
    for (const char* tool : {"sed", "grep", "tail", "head", "timeout", "cat"}) {
      for (const char* where : {"/usr/bin/", "/bin/"}) {
        if (fs::exists(std::string(where) + tool)) {
          fs::create_symlink(std::string(where) + tool, dir / "bin" / tool);
          break;
        }
      }
    }
    write("etc/slurm.conf", "ClusterName=t\nPlugStackConfig=" + (dir / "etc" / "plugstack.conf").string() + "\n");
    write("etc/plugstack.conf", "include " + (dir / "etc" / "plugstack.conf.d").string() + "/*\n");
  }
  ~ProbeNode()
  {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  ProbeNode(const ProbeNode&) = delete;
  ProbeNode& operator=(const ProbeNode&) = delete;

  void write(const std::string& name, const std::string& text) const
  {
    rv::testing::write_text((dir / name).string(), text);
  }

  // A program in bin/ that prints `out`.
  void program(const std::string& name, const std::string& out) const
  {
    write("bin/" + name, "#!/bin/sh\ncat <<'EOF'\n" + out + "EOF\n");
    fs::permissions(dir / "bin" / name, fs::perms::owner_all);
  }

  // The probe's answer on this node.
  proc::Outcome run() const
  {
    const auto cmd = slurm::container_probe_command();
    const auto script = (dir / "probe.sh").string();
    rv::testing::write_text(script, cmd.argv[2]);
    const auto out = (dir / "out").string();
    const auto line = "env -i PATH='" + (dir / "bin").string() + "' SLURM_CONF='" +
                      (dir / "etc" / "slurm.conf").string() + "' /bin/sh '" + script + "' >'" + out + "' 2>/dev/null";
    const int raw = std::system(line.c_str());
    proc::Outcome o;
    o.exit_code = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
    o.out = rv::testing::read_text(out);
    return o;
  }
};

std::string data(const std::string& name)
{
  return rv::testing::read_data(std::string(RV_TEST_DATA_DIR) + "/containers/" + name);
}

} // namespace

TEST_CASE("container probe: Pyxis from srun --help, Apptainer by command -v, with its version")
{
  ProbeNode node;
  node.program("srun", data("srun_help_pyxis.txt"));
  node.program("apptainer", "apptainer version 1.3.4\n");
  node.program("singularity", "singularity-ce version 4.1.0\n");
  auto s = slurm::parse_container_probe(node.run());
  CHECK(s.probed);
  CHECK(s.pyxis);
  CHECK(s.pyxis_evidence == "srun --help");
  CHECK(s.apptainer == "apptainer"); // the first of the two
  CHECK(s.apptainer_path == (node.dir / "bin" / "apptainer").string());
  CHECK(s.apptainer_version == "1.3.4");
  CHECK_FALSE(s.enroot);
  CHECK_FALSE(s.pyxis_env); // this Pyxis has no --container-env: the image's ENV wins
}

TEST_CASE("container probe: a newer Pyxis lists --container-env, which discovery keeps")
{
  ProbeNode node;
  node.program("srun", data("srun_help_pyxis_env.txt"));
  auto s = slurm::parse_container_probe(node.run());
  CHECK(s.pyxis);
  CHECK(s.pyxis_env);
  CHECK(describe(s) == "pyxis (srun --help, --container-env)");
  const auto choice = choose_container_runtime(model::RuntimeSetting::automatic, s,
                                               {model::ImageKind::docker, "docker://ubuntu:22.04"});
  REQUIRE(choice);
  CHECK(choice->pyxis_env);
  s.pyxis_env = false;
  CHECK_FALSE(
      choose_container_runtime(model::RuntimeSetting::pyxis, s, {model::ImageKind::docker, "docker://x:1"})->pyxis_env);
}

TEST_CASE("container probe: Pyxis from the plugstack file when srun --help does not list it, singularity alone")
{
  ProbeNode node;
  node.program("srun", data("srun_help_plain.txt"));
  node.program("singularity", "singularity-ce version 4.1.0\n");
  node.program("enroot", "");
  auto none = slurm::parse_container_probe(node.run());
  CHECK_FALSE(none.pyxis);
  CHECK(none.apptainer == "singularity");
  CHECK(none.apptainer_version == "4.1.0");
  CHECK(none.enroot);
  node.write("etc/plugstack.conf.d/pyxis.conf", data("plugstack_pyxis.conf"));
  auto s = slurm::parse_container_probe(node.run());
  CHECK(s.pyxis);
  CHECK(s.pyxis_evidence == (node.dir / "etc" / "plugstack.conf.d" / "pyxis.conf").string());
}

TEST_CASE("container probe: nothing there, a failed probe is unknown, never an error")
{
  ProbeNode node;
  node.program("srun", data("srun_help_plain.txt"));
  auto s = slurm::parse_container_probe(node.run());
  CHECK(s.probed);
  CHECK_FALSE(s.pyxis);
  CHECK(s.apptainer.empty());
  proc::Outcome failed;
  failed.exit_code = 127;
  CHECK_FALSE(slurm::parse_container_probe(failed).probed);
  // Lines it does not know, or a runtime name it does not expect, are ignored.
  proc::Outcome odd;
  odd.exit_code = 0;
  odd.out = "runtime=docker\nnoise\npyxis_srun=0\n";
  auto o = slurm::parse_container_probe(odd);
  CHECK(o.apptainer.empty());
  CHECK_FALSE(o.pyxis);
  CHECK(slurm::is_container_probe(slurm::container_probe_command()));
}
