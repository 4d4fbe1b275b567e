// --container in the job script (templates/container.cpp, docs/containers.md): the rendered step of
// each runtime, and whole rendered jobs run with bash against a fake `apptainer` (the real CLI's
// exec/pull grammar, recording its argv), the fake srun (tests/fakes/bin: Pyxis's options are
// ignored there, so the "container" is the host) and the testbed's stand-in nvidia-smi.

#include "exec_fixture.hpp"
#include "fake_node.hpp"

#include "core/process/shell.hpp"
#include "sync/deps.hpp"
#include "templates/launcher.hpp"
#include "templates/preflight.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

using namespace rv;
using namespace rv::templates;
using namespace rv::templates::testing;
namespace fs = std::filesystem;

namespace {

// The fake runtime: `pull OUT REF` (a REF with "missing" fails as a registry does), `exec [--nv]
// --bind B --pwd P IMAGE CMD...` (an image named *nogpu*, or no --nv: nvidia-smi finds no device).
constexpr const char* k_fake_apptainer = R"sh(#!/bin/bash
printf 'apptainer %s\n' "$*" >>"$FAKE_LOG"
case $1 in
--version) echo "apptainer version 1.3.4" ;;
pull)
  case $3 in *missing*)
    echo "INFO:    Converting OCI blobs to SIF format" >&2
    echo "FATAL:   While making image from oci registry: error fetching image: manifest unknown" >&2
    exit 255 ;;
  *broken*) # a pull that dies half way: part of the file is written (a full disk, a lost mount)
    printf 'SIF half\n' >"$2"
    echo "FATAL:   While making image from oci registry: write $2: no space left on device" >&2
    exit 255 ;;
  esac
  printf 'SIF %s\n' "$3" >"$2" ;;
exec)
  shift
  nv=0 pwd=/
  while [ $# -gt 0 ]; do
    case $1 in --nv) nv=1; shift ;; --bind | --pwd) [ "$1" = --pwd ] && pwd=$2; shift 2 ;; -*) shift ;; *) break ;; esac
  done
  img=$1
  shift
  if [ ! -e "$img" ]; then echo "FATAL:   could not open image $img: no such file or directory" >&2; exit 255; fi
  if [ "$nv" = 0 ] || grep -q nogpu "$img"; then PATH="${0%/*}/nogpu:/usr/bin:/bin"; fi
  if grep -q h200 "$img"; then PATH="${0%/*}/h200:/usr/bin:/bin"; fi
  cd "$pwd" || exit 255
  # The image's ENV (FAKE_IMAGE_ENV: NAME=VALUE lines) wins over the host's value, an
  # APPTAINERENV_NAME over both, as Apptainer does.
  if [ -n "${FAKE_IMAGE_ENV:-}" ]; then
    while IFS='=' read -r n v; do
      o="APPTAINERENV_$n"
      [ -z "$n" ] || [ -n "${!o+x}" ] || export "$n=$v"
    done <"$FAKE_IMAGE_ENV"
  fi
  for o in $(compgen -e APPTAINERENV_); do export "${o#APPTAINERENV_}=${!o}"; unset "$o"; done
  RV_FAKE_CONTAINER=1 exec "$@" ;;
*) echo "FATAL:   unknown command $1" >&2; exit 255 ;;
esac
)sh";

const std::string k_gpus =
    "0|NVIDIA A100-SXM4-80GB|GPU-90095414-dacb-e9ba-fb13-1678e28dc82c|81920|00000000:07:00.0||0\n"
    "1|NVIDIA A100-SXM4-80GB|GPU-fb38853b-ad8a-ea5d-8e04-01ce97652247|81920|00000000:17:00.0||0\n";

struct ContainerNode : FakeNode {
  ContainerNode() : FakeNode(k_gpus)
  {
    rv::testing::write_text(path("bin/apptainer"), k_fake_apptainer);
    fs::permissions(dir / "bin" / "apptainer", fs::perms::owner_all);
    fs::create_directories(dir / "bin" / "nogpu"); // what a container without the GPUs runs
    rv::testing::write_text(path("bin/nogpu/nvidia-smi"), "#!/bin/sh\necho 'No devices were found'\nexit 6\n");
    fs::permissions(dir / "bin" / "nogpu" / "nvidia-smi", fs::perms::owner_all);
    // What a real H200 node's nvidia-smi -L prints (captured, tests/data/nvidia-smi/captured-h200).
    fs::create_directories(dir / "bin" / "h200");
    rv::testing::write_text(path("bin/h200/nvidia-smi"),
                            "#!/bin/sh\ncat '" RV_TEST_DATA_DIR "/nvidia-smi/captured-h200/list.txt'\n");
    fs::permissions(dir / "bin" / "h200" / "nvidia-smi", fs::perms::owner_all);
    set("driver", "550.54.15");
  }

  RenderOptions options_with(const std::string& image, bool pyxis) const
  {
    auto o = options();
    model::ContainerOrder order{{model::ImageKind::docker, image}, {}};
    if (image.starts_with("/")) {
      order.image.kind = model::ImageKind::sif;
    }
    o.container = ContainerRun{
        order,
        {pyxis ? model::ContainerRuntime::pyxis : model::ContainerRuntime::apptainer, pyxis ? "" : "apptainer", "test"},
        false};
    return o;
  }

  // Renders `o` for `s` as request req-<job id> (each run its own claim: the race guard would take a
  // second job of one request for a duplicate) and runs it as job `job_id` on `nodes` nodes; stdout
  // in o.<id>, stderr in e.<id>.
  int run(RenderOptions o, const model::Strategy& s, const std::string& job_id, int nodes = 1,
          const std::string& granted = "0,1", const std::string& more_env = "") const
  {
    o.request_id = "req-" + job_id;
    write_script("job" + job_id, render_ok(s, base_request(), o));
    const auto env = job_env(job_id, "TB_DIR='" + dir.string() + "' SLURMD_NODENAME=n1 SLURM_JOB_GPUS=" + granted +
                                         " SLURM_NNODES=" + std::to_string(nodes) + " " + more_env);
    const auto with_bin = "PATH='" + path("bin") + ":" RV_SOURCE_DIR "/tests/fakes/bin:/usr/bin:/bin' ";
    return sh(env + with_bin + "bash '" + path("job" + job_id + ".sbatch") + "' >'" + path("o." + job_id) + "' 2>'" +
              path("e." + job_id) + "'");
  }
};

} // namespace

TEST_CASE("container: Apptainer pulls a docker:// image once, then runs the command inside, byte for byte")
{
  ContainerNode node;
  auto o = node.options_with("docker://rv-test/pytorch:24.05", false);
  rv::testing::write_text(node.path("env"), "export HF_TOKEN='s3cr3t value'\n");
  o.secrets_file = node.path("env");
  o.venv = node.path("venv"); // never activated in a container (it does not exist: activating it would fail)
  o.command = "printf '%s|' \"$HF_TOKEN\" \"$RV_FAKE_CONTAINER\" \"$PWD\" 'it'\\''s $HOME' \"$HF_HOME\" >got.txt";
  const auto script = render_ok(base_strategy(), base_request(), o);
  CHECK(script.find("s3cr3t") == std::string::npos);
  REQUIRE(node.run(o, base_strategy(), "601") == 0);
  CHECK(node.read("got.txt") ==
        "s3cr3t value|1|" + node.dir.string() + "|it's $HOME|" + node.path("cache") + "/huggingface|");
  const auto calls = node.read("calls.log");
  CHECK(calls.find("s3cr3t") == std::string::npos); // secrets pass by environment, never argv
  const auto sif = node.path("cache") + "/containers/images/" + pulled_image_name("docker://rv-test/pytorch:24.05");
  CHECK(calls.find("apptainer pull " + sif + ".part.") != std::string::npos);
  // The cache and rv's root are inside the work directory here: mounted with it (the goldens show three).
  CHECK(calls.find("apptainer exec --nv --bind " + node.dir.string() + " --pwd " + node.dir.string() + " " + sif +
                   " bash -c ") != std::string::npos);
  CHECK(calls.find("--cleanenv") == std::string::npos);
  CHECK(calls.find("--rocm") == std::string::npos);
  const auto err = node.read("e.601");
  CHECK(err.find("rv: pulling docker://rv-test/pytorch:24.05\n") != std::string::npos);
  CHECK(err.find("rv: image ready in ") != std::string::npos);
  CHECK(err.find("rv preflight: ok node=n1 container=1 gpus=2/2") != std::string::npos);
  // The pull comes before the watchdog starts and before anything of the user's.
  CHECK(script.find("_rv_ct_pull") < script.find("RV_COMMAND="));

  // A second job finds the image in the cache: no second pull.
  rv::testing::write_text(node.path("env"), "export HF_TOKEN='s3cr3t value'\n");
  REQUIRE(node.run(o, base_strategy(), "602") == 0);
  CHECK(count(node.read("calls.log"), "apptainer pull ") == 1);
  CHECK(node.read("e.602").find("(cached)") != std::string::npos);
}

// A race's loser cancelled while it pulled leaves the pull's lock behind: the winner must not wait
// RV_CT_TIMEOUT (30 minutes) for a holder that is gone, with its GPUs allocated. Who holds the lock
// is judged as a study judges a claim's owner (_rv_job_alive): squeue failing for another reason
// than an unknown job (the controller unreachable) means a holder that may still be pulling, never
// an ended one; this job's own id is an earlier run of it (a checkpoint segment requeued while it
// pulled), whose lock nobody else will ever remove.
TEST_CASE("container: a pull lock is taken over from a job that has ended or this job's earlier run, a live "
          "holder's is waited for")
{
  ContainerNode node;
  const std::string image = "docker://rv-test/pytorch:24.05";
  auto o = node.options_with(image, false);
  o.command = "true";
  const auto sif = node.path("cache") + "/containers/images/" + pulled_image_name(image);
  auto lock_by = [&](const std::string& job) {
    fs::remove(sif);
    fs::create_directories(sif + ".lock");
    rv::testing::write_text(sif + ".lock/job", job + "\n");
  };

  // Job 777 still in the queue (squeue lists it): the lock is honoured until RV_CT_TIMEOUT.
  lock_by("777");
  rv::testing::write_text(node.path("squeue.txt"), "777\n");
  const int rc611 = node.run(o, base_strategy(), "611", 1, "0,1",
                             "RV_CT_TIMEOUT=4 FAKE_SQUEUE_FILE='" + node.path("squeue.txt") + "'");
  REQUIRE_MESSAGE(rc611 == 0, node.read("e.611"));
  CHECK(node.read("e.611").find("taking it over") == std::string::npos);
  CHECK(node.read("calls.log").find("squeue -h -j 777 ") != std::string::npos);
  CHECK(count(node.read("calls.log"), "apptainer pull ") == 1); // after the wait, it pulls anyway

  // Job 777 gone: taken over at once (without the check the job waits out the 60 s and says nothing).
  lock_by("777");
  REQUIRE(node.run(o, base_strategy(), "612", 1, "0,1", "RV_CT_TIMEOUT=60") == 0);
  CHECK(node.read("e.612").find("rv: the image's pull lock is job 777's, which has ended: taking it over") !=
        std::string::npos);
  CHECK(count(node.read("calls.log"), "apptainer pull ") == 2);
  CHECK(fs::exists(sif));
  CHECK_FALSE(fs::exists(sif + ".lock")); // the new holder's lock is gone with its pull

  // From here squeue answers for job 777 with the error in squeue.err (exit 1); any other call is
  // the fake's.
  rv::testing::write_text(
      node.path("bin/squeue"),
      "#!/bin/bash\ncase \" $* \" in *\" -j 777 \"*)\n  printf 'squeue %s\\n' \"$*\" >>\"$FAKE_LOG\"\n"
      "  cat \"$TB_DIR/squeue.err\" >&2\n  exit 1 ;;\nesac\nexec '" RV_SOURCE_DIR "/tests/fakes/bin/squeue' \"$@\"\n");
  fs::permissions(node.dir / "bin" / "squeue", fs::perms::owner_all);

  // The controller cannot be reached: job 777 may still be pulling. Waited for, its lock left to it.
  rv::testing::write_text(node.path("squeue.err"),
                          "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n");
  lock_by("777");
  REQUIRE(node.run(o, base_strategy(), "617", 1, "0,1", "RV_CT_TIMEOUT=4") == 0);
  CHECK(node.read("e.617").find("taking it over") == std::string::npos);
  CHECK(fs::exists(sif + ".lock/job")); // still 777's

  // Slurm no longer knows job 777 (purged after MinJobAge): it has ended; taken over at once.
  rv::testing::write_text(node.path("squeue.err"), "slurm_load_jobs error: Invalid job id specified\n");
  lock_by("777");
  REQUIRE(node.run(o, base_strategy(), "618", 1, "0,1", "RV_CT_TIMEOUT=30") == 0);
  CHECK(node.read("e.618").find("rv: the image's pull lock is job 777's, which has ended: taking it over") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(sif + ".lock"));

  // The lock names this very job: its earlier run (requeued) died pulling. Taken over at once.
  lock_by("619");
  REQUIRE(node.run(o, base_strategy(), "619", 1, "0,1", "RV_CT_TIMEOUT=30") == 0);
  CHECK(node.read("e.619").find("rv: the image's pull lock is this job's own, from a run before it was requeued: "
                                "taking it over") != std::string::npos);
  CHECK(fs::exists(sif));
  CHECK_FALSE(fs::exists(sif + ".lock"));
}

// A pull that fails after writing part of the file must not leave that part as the cached image: the
// job and every later one would run (or fail to open) a broken image instead of pulling again.
TEST_CASE("container: a pull that fails half way leaves no image in the cache")
{
  ContainerNode node;
  const std::string image = "docker://rv-test/broken:1";
  auto o = node.options_with(image, false);
  o.command = "touch '" + node.path("marker") + "'";
  const auto dir = node.path("cache") + "/containers/images/";
  CHECK(node.run(o, base_strategy(), "615") == 96);
  CHECK_FALSE(fs::exists(node.path("marker")));
  CHECK_FALSE(fs::exists(dir + pulled_image_name(image)));
  for (const auto& e : fs::directory_iterator(dir)) {
    CHECK_MESSAGE(e.path().filename().string().find(".part.") == std::string::npos, e.path()); // no leftover
  }
  CHECK(rv::testing::read_text(preflight_verdict_path(o.remote_root, "req-615", "615"))
            .starts_with("rv preflight: FAIL node=n1 scope=request reason=apptainer pull docker://rv-test/broken:1 "
                         "failed: FATAL:   While making image from oci registry: write "));
  // The next job pulls again rather than finding a cached half image.
  CHECK(node.run(o, base_strategy(), "616") == 96);
  CHECK(count(node.read("calls.log"), "apptainer pull ") == 2);
}

TEST_CASE("container: an image that cannot be pulled ends the job with 96 and a request-wide verdict")
{
  ContainerNode node;
  auto o = node.options_with("docker://rv-test/missing:1", false);
  o.command = "touch '" + node.path("marker") + "'";
  CHECK(node.run(o, base_strategy(), "611") == 96);
  CHECK_FALSE(fs::exists(node.path("marker")));
  const auto verdict = rv::testing::read_text(preflight_verdict_path(o.remote_root, "req-611", "611"));
  CHECK(verdict.starts_with("rv preflight: FAIL node=n1 scope=request reason=apptainer pull "
                            "docker://rv-test/missing:1 failed: FATAL:   While making image from oci registry: "
                            "error fetching image: manifest unknown"));
  CHECK(count(verdict, "\n") == 1); // the runtime's error in one line

  // A .sif that is not there: the same, without a pull.
  auto sif = node.options_with(node.path("nothere.sif"), false);
  sif.command = o.command;
  CHECK(node.run(sif, base_strategy(), "612") == 96);
  CHECK(rv::testing::read_text(preflight_verdict_path(o.remote_root, "req-612", "612"))
            .starts_with("rv preflight: FAIL node=n1 scope=request reason=apptainer exec exited 255: FATAL:   could "
                         "not open image"));
  CHECK_FALSE(fs::exists(node.path("marker")));
}

TEST_CASE("container: a container that sees no GPU fails the node, as a node-style preflight failure")
{
  ContainerNode node;
  auto o = node.options_with("docker://rv-test/nogpu:1", false);
  o.command = "touch '" + node.path("marker") + "'";
  CHECK(node.run(o, base_strategy(), "621") == 96);
  CHECK_FALSE(fs::exists(node.path("marker")));
  const auto verdict = rv::testing::read_text(preflight_verdict_path(o.remote_root, "req-621", "621"));
  CHECK(verdict ==
        "rv preflight: FAIL node=n1 reason=the container sees no GPU: nvidia-smi -L exited 6: No devices were "
        "found\n");

  // --no-preflight: the image is still pulled, the command runs without the check.
  o.preflight = false;
  CHECK(node.run(o, base_strategy(), "622") == 0);
  CHECK(fs::exists(node.path("marker")));
}

TEST_CASE("container: Apptainer on 2 nodes: every rank runs in the container with its NODE_RANK")
{
  ContainerNode node;
  auto s = base_strategy();
  s.nodes = 2;
  auto o = node.options_with("docker://rv-test/pytorch:24.05", false);
  o.command = "echo \"$NODE_RANK/$WORLD_SIZE $RV_FAKE_CONTAINER $MASTER_ADDR\" >>ranks.txt";
  REQUIRE(node.run(o, s, "631", 2) == 0);
  auto ranks = node.read("ranks.txt");
  CHECK(count(ranks, "/2 1 node-1\n") == 2);
  CHECK(ranks.find("0/2 1") != std::string::npos);
  CHECK(ranks.find("1/2 1") != std::string::npos);
  CHECK(count(node.read("calls.log"), "apptainer pull ") == 1); // once, by the batch shell
  CHECK(count(node.read("e.631"), "rv preflight: ok node=n1 container=1") == 2);
}

TEST_CASE("container: Pyxis: the step and every rank get srun's container options, the check runs on every node")
{
  ContainerNode node;
  for (int nodes : {1, 2}) {
    auto s = base_strategy();
    s.nodes = nodes;
    auto o = node.options_with("docker://nvcr.io/nvidia/pytorch:24.05-py3", true);
    o.command = "echo \"rank=${NODE_RANK:-single}\" >>ranks" + std::to_string(nodes) + ".txt";
    const auto id = std::to_string(640 + nodes);
    REQUIRE(node.run(o, s, id, nodes) == 0);
    const auto calls = node.read("calls.log");
    const auto flags = "--container-image=nvcr.io#nvidia/pytorch:24.05-py3 --container-name=rv-req-" + id + "-" + id +
                       " --container-mounts=" + node.dir.string() + ":" + node.dir.string() +
                       " --container-workdir=" + node.dir.string();
    CHECK(calls.find(flags + " sh -c ") != std::string::npos); // the preflight's container step
    if (nodes == 1) {
      CHECK(calls.find(flags + " bash -c ") != std::string::npos); // the command's step
    } else {
      CHECK(calls.find(flags + " bash -c _rv_task") != std::string::npos);
      CHECK(node.read("ranks2.txt").find("rank=1\n") != std::string::npos);
    }
    CHECK(node.read("e." + id).find("rv: pulling docker://nvcr.io/nvidia/pytorch:24.05-py3 (enroot") !=
          std::string::npos);
  }
}

TEST_CASE("container: every rendered container step keeps the contract's invariants")
{
  for (const auto& c : golden_cases()) {
    if (!c.options.container) {
      continue;
    }
    CAPTURE(c.name);
    const auto script = render_ok(c.strategy, c.request, c.options);
    const bool apptainer = c.options.container->choice.runtime == model::ContainerRuntime::apptainer;
    CHECK(script.find("bin/activate") == std::string::npos); // no venv in a container
    CHECK(script.find("--cleanenv") == std::string::npos);
    CHECK(script.find("--rocm") == std::string::npos);
    CHECK(script.find("--env") == std::string::npos); // no variable passed on a command line
    // The job's values win over the image's ENV: Apptainer by APPTAINERENV_ exports (environment, never
    // argv), Pyxis by --container-env where srun offers it; the secrets' names are among them.
    CHECK(script.find("RV_CT_ENV_NAMES='PYTHONUNBUFFERED TOKENIZERS_PARALLELISM OMP_NUM_THREADS HF_HOME ") !=
          std::string::npos);
    CHECK(script.find(" HF_TOKEN WANDB_API_KEY'\n") != std::string::npos);
    CHECK(count(script, "APPTAINERENV_") == (apptainer ? 1 : 0));
    if (apptainer) {
      CHECK(script.find("export \"APPTAINERENV_$_rv_n=${!_rv_n}\"; done\n  exec apptainer exec") != std::string::npos);
    }
    // Pyxis: every step with the image names the job's container (imported once per node), and gets
    // --container-env exactly when srun offers it.
    const auto images = count(script, "--container-image=");
    CHECK(count(script, "--container-name=\"$RV_CT_NAME\"") == images);
    CHECK(count(script, "--container-env=") == (c.options.container->choice.pyxis_env ? images : 0));
    if (!apptainer) {
      CHECK(images == (c.strategy.nodes > 1 ? 3 : 2)); // the check's, _rv_ct's and the ranks' step
      CHECK(script.find("RV_CT_NAME=rv-r20261122-ab12-\"${SLURM_JOB_ID:-0}\"\n") != std::string::npos);
      // The check compares the job's values with the image's only where --container-env is missing.
      CHECK((script.find("RV_CT_ENV_CHECK=") != std::string::npos) != c.options.container->choice.pyxis_env);
    }
    // The command once, as one single-quoted assignment: read back byte for byte (with the launcher's
    // multi-node flags where it has a launcher, as without a container).
    const auto command = inject_launcher_flags(c.options.command, c.strategy.nodes > 1).command;
    CHECK(script.find("RV_COMMAND=" + proc::shell_quote(command) + "\n") != std::string::npos);
    CHECK(script.find("/data/sets:/data:ro") != std::string::npos);
    if (apptainer) {
      CHECK(script.find("apptainer exec --nv --bind \"$RV_CT_BINDS\" --pwd \"$RV_CT_WORKDIR\" \"$RV_CT_IMAGE\"") !=
            std::string::npos);
      CHECK(script.find("--container-image") == std::string::npos);
    } else {
      CHECK(script.find("RV_CT_IMAGE='nvcr.io#nvidia/pytorch:24.05-py3'") != std::string::npos);
      CHECK(script.find("ENROOT_CACHE_PATH=") != std::string::npos);
    }
    if (c.strategy.nodes > 1) { // the launcher's multi-node flags and the ranks are intact
      CHECK(script.find("--node_rank=\"$NODE_RANK\"") != std::string::npos);
      CHECK(script.find("export NODE_RANK=\"$SLURM_NODEID\"") != std::string::npos);
    }
  }
  // --nv only when GPUs are requested.
  auto c = golden_cases().back();
  c.strategy.gres.clear();
  c.strategy.gpus_per_node = 0;
  c.options.container->choice = {model::ContainerRuntime::apptainer, "singularity", "test"};
  const auto cpu = render_ok(c.strategy, c.request, c.options);
  CHECK(cpu.find("singularity exec --bind") != std::string::npos);
  CHECK(cpu.find("--nv") == std::string::npos);
  CHECK(cpu.find("export \"SINGULARITYENV_$_rv_n=${!_rv_n}\"") != std::string::npos); // its own prefix
  CHECK(cpu.find("APPTAINERENV_") == std::string::npos);
}

TEST_CASE("container: Pyxis imports the image once per node per job: the command's step reuses the container")
{
  ContainerNode node;
  for (bool preflight : {true, false}) {
    CAPTURE(preflight);
    auto s = base_strategy();
    auto o = node.options_with("docker://rv-test/base:1", true);
    o.preflight = preflight;
    o.watchdog.interval_s = 5; // the watchdog starts after the import: its time is never the job's
    o.command = "echo ran";
    const auto id = preflight ? "661" : "662";
    REQUIRE(node.run(o, s, id, 1) == 0);
    const auto calls = node.read("calls.log");
    const auto name = std::string("--container-name=rv-req-") + id + "-" + id;
    const auto script = node.read(std::string("job") + id + ".sbatch");
    // The import's step (the preflight's check, or a step of its own without it), then the command's,
    // both in the job's container.
    CHECK(count(calls, name + " ") == 2);
    const auto import_at = calls.find(name + " --container-mounts=" + node.dir.string() + ":" + node.dir.string() +
                                      " --container-workdir=" + node.dir.string() + " sh -c ");
    const auto command_at = calls.find(name + " --container-mounts=" + node.dir.string() + ":" + node.dir.string() +
                                       " --container-workdir=" + node.dir.string() + " bash -c ");
    REQUIRE(import_at != std::string::npos);
    CHECK(command_at > import_at);
    const auto err = node.read(std::string("e.") + id);
    CHECK(err.find(preflight
                       ? "(enroot, at the start of the preflight's container step, into the job's container rv-req-"
                       : "(enroot, an import step of its own: the preflight is off, into the job's container "
                         "rv-req-") != std::string::npos);
    CHECK(err.find("image ready in ") != std::string::npos);
    // In the script, the import comes before the watchdog starts.
    const auto import_step = script.find("_rv_ct_out=$(timeout -k 5 \"$RV_CT_TIMEOUT\" srun");
    REQUIRE(import_step != std::string::npos);
    CHECK(import_step < script.find("_rv_wd_sampler \"$$\""));
    CHECK((script.find("nvidia-smi -L") != std::string::npos) == preflight); // no check without the preflight
  }
}

TEST_CASE("container: Pyxis: a failed import without the preflight still ends the job with 96, request-wide")
{
  ContainerNode node;
  auto s = base_strategy();
  auto o = node.options_with("docker://rv-test/missing:1", true);
  o.preflight = false;
  o.command = "echo ran >ran.txt";
  // The fake srun fails the step as Pyxis does when enroot cannot import the image.
  rv::testing::write_text(node.path("bin/srun"), R"sh(#!/bin/bash
printf 'srun %s\n' "$*" >>"$FAKE_LOG"
case "$*" in *--container-image=rv-test/missing*)
  echo 'pyxis: importing docker image: rv-test/missing:1' >&2
  echo 'slurmstepd: error: pyxis: failed to import docker image: rv-test/missing:1' >&2
  exit 1 ;;
esac
exec ')sh" RV_SOURCE_DIR R"sh(/tests/fakes/bin/srun' "$@"
)sh");
  fs::permissions(node.dir / "bin" / "srun", fs::perms::owner_all);
  CHECK(node.run(o, s, "663", 1) == 96);
  CHECK_FALSE(fs::exists(node.path("ran.txt")));
  CHECK(node.read("e.663").find("rv preflight: FAIL node=node-1 scope=request reason=the container did not start "
                                "(pyxis, srun exit 1): slurmstepd: error: pyxis: failed to import docker image") !=
        std::string::npos);
}

// An image's own ENV (an NGC or TGI image sets HF_HOME, a secret's name...) wins over the host's
// value in both runtimes unless rv says otherwise: the fakes model it (FAKE_IMAGE_ENV for the
// fake apptainer, FAKE_PYXIS_IMAGE_ENV for the fake srun).
TEST_CASE(
    "container: the job's HF_HOME and secrets win over the image's ENV, and a Pyxis without --container-env warns")
{
  ContainerNode node;
  rv::testing::write_text(node.path("image.env"), "HF_HOME=/data\nHF_TOKEN=image-token\nRV_OUTPUT_DIR=/image-out\n");
  rv::testing::write_text(node.path("secrets"), "export HF_TOKEN='job-secret-7'\n");
  const auto env =
      "FAKE_IMAGE_ENV='" + node.path("image.env") + "' FAKE_PYXIS_IMAGE_ENV='" + node.path("image.env") + "'";
  struct Run {
    bool pyxis;
    bool pyxis_env;
    const char* id;
  };
  for (const auto& r : {Run{false, false, "671"}, Run{true, true, "672"}, Run{true, false, "673"}}) {
    CAPTURE(r.id);
    auto o = node.options_with("docker://rv-test/base:1", r.pyxis);
    o.container->choice.pyxis_env = r.pyxis_env;
    o.secrets_file = node.path("secrets");
    o.secret_names = {"HF_TOKEN"};
    o.command = std::string("echo \"$HF_HOME|$HF_TOKEN|$RV_OUTPUT_DIR\" >env") + r.id +
                ".txt; env | grep -c '^RV_CT_HOST_' >hosts" + r.id + ".txt || true";
    REQUIRE(node.run(o, base_strategy(), r.id, 1, "0,1", env) == 0);
    const auto seen = node.read(std::string("env") + r.id + ".txt");
    const auto err = node.read(std::string("e.") + r.id);
    const auto calls = node.read("calls.log");
    CHECK(calls.find("job-secret-7") == std::string::npos); // never in argv
    CHECK(err.find("job-secret-7") == std::string::npos);
    if (r.pyxis && !r.pyxis_env) { // the old Pyxis: the image wins, and the preflight says so
      CHECK(seen == "/data|image-token|/image-out\n");
      CHECK(node.read(std::string("hosts") + r.id + ".txt") == "0\n"); // the check's copies are gone
      CHECK(err.find("rv: warning: node n1: the image sets HF_HOME, HF_TOKEN, RV_OUTPUT_DIR: its values win over "
                     "the job's (this Pyxis has no --container-env)") != std::string::npos);
      continue;
    }
    CHECK(seen == node.path("cache") + "/huggingface|job-secret-7|" + node.path("out") + "/train-" + r.id + "\n");
    CHECK(err.find("the image sets") == std::string::npos);
    if (r.pyxis) {
      CHECK(calls.find("--container-env=PYTHONUNBUFFERED,TOKENIZERS_PARALLELISM,") != std::string::npos);
      CHECK(calls.find(",HF_TOKEN,") != std::string::npos); // the name, never the value
    }
  }
}

TEST_CASE("container: rv up's step runs the shell or the command in the container, bad mount paths are refused")
{
  auto o = base_options();
  CHECK(step_tail(o, true) == "exec bash -i\n");
  CHECK(step_tail(o, false) == "bash -c \"$RV_COMMAND\"\n");
  o.container =
      ContainerRun{{{model::ImageKind::sif, "/img/x.sif"}, {}}, {model::ContainerRuntime::apptainer, "", ""}, false};
  CHECK(step_tail(o, true) == "_rv_ct bash -i\nexit $?\n");
  CHECK(step_tail(o, false) == "_rv_ct bash -c \"$RV_COMMAND\"\nexit $?\n");
  o.container->choice.runtime = model::ContainerRuntime::pyxis;
  CHECK(step_tail(o, true) == "_rv_ct --pty bash -i\nexit $?\n");
  // rv up's holder: the batch script pulls and checks, but sleeps on the node.
  o.container->prepare_only = true;
  o.command = "exec sleep 100";
  const auto holder = render_ok(base_strategy(), base_request(), o);
  CHECK(holder.find("\nbash -c \"$RV_COMMAND\"\n") != std::string::npos);
  CHECK(holder.find("RV_CT_PROBE=") != std::string::npos);
  o.workdir = "/scratch/a,b";
  auto bad = render(base_strategy(), base_request(), o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("cannot be mounted into a container") != std::string::npos);
}

// A task's set-up (`setup`, --setup: docs/taskfile.md) is the user's code for the command's
// environment (`pip install -e .`): it runs where the command runs, in the container, not in the
// node's own environment the image never sees.
TEST_CASE("container: the task's set-up runs in the container, once per content")
{
  ContainerNode node;
  auto o = node.options_with("docker://rv-test/pytorch:24.05", false);
  o.task_setup = sync::setup_job_lines(node.path("marks"), "k1",
                                       "printf '%s|' \"${RV_FAKE_CONTAINER:-host}\" \"$PWD\" >>setup.txt");
  o.command = "cat setup.txt >got.txt";
  REQUIRE(node.run(o, base_strategy(), "661") == 0);
  CHECK(node.read("got.txt") == "1|" + node.dir.string() + "|");
  CHECK(fs::exists(node.path("marks/k1.done")));
}

// Pyxis hands each mount to enroot as `echo "SRC DST FLAGS"` in the shell script enroot start reads
// (pyxis's add_mount and its start configuration): a space cuts the path where enroot splits the
// line, and '"', '$', '`', '\' are the shell's. Apptainer takes them all (argv).
TEST_CASE("container: a mount path Pyxis would cut or expand is refused, before anything is queued")
{
  auto o = base_options();
  o.command = "python x.py";
  model::ContainerOrder order{{model::ImageKind::docker, "docker://ubuntu:22.04"}, {{"/data/my sets", "/data", true}}};
  o.container = ContainerRun{order, {model::ContainerRuntime::pyxis, "", "test"}, false};
  auto bad = render(base_strategy(), base_request(), o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::usage);
  CHECK(bad.error().message == "--container-mount \"/data/my sets:/data:ro\": Pyxis cannot mount it (enroot reads "
                               "its mounts as shell words: no space, '\"', '$', '`' or '\\')");
  CHECK(bad.error().hint.find("container_runtime apptainer") != std::string::npos);
  for (const char* src : {"/data/$USER", "/data/`id`", "/data/a\"b", "/data/a\\b"}) {
    CAPTURE(src);
    o.container->order.mounts = {{src, "/data", false}};
    CHECK_FALSE(render(base_strategy(), base_request(), o).has_value());
  }
  // rv's own mounts too: a --workdir with a space, outside rv's root, is mounted itself.
  o.container->order.mounts.clear();
  o.workdir = "/scratch/my work";
  auto own = render(base_strategy(), base_request(), o);
  REQUIRE_FALSE(own.has_value());
  CHECK(own.error().message.starts_with("the path '/scratch/my work' cannot be mounted by Pyxis"));
  // A snapshot under rv's root is mounted with it: a project named "my proj" runs.
  o.workdir = "/scratch/alice/.rv/workspaces/my proj/snap-1";
  const auto snap = render(base_strategy(), base_request(), o);
  REQUIRE(snap.has_value());
  CHECK(snap->find("RV_CT_MOUNTS=/scratch/alice/.cache/rv:/scratch/alice/.cache/rv,/scratch/alice/.rv:/scratch/alice/"
                   ".rv\n") != std::string::npos);
  CHECK(snap->find("RV_CT_WORKDIR='/scratch/alice/.rv/workspaces/my proj/snap-1'") != std::string::npos);
  // Apptainer takes them all.
  o.workdir = "/scratch/my work";
  o.container->order.mounts = order.mounts;
  o.container->choice = {model::ContainerRuntime::apptainer, "apptainer", "test"};
  const auto ok = render(base_strategy(), base_request(), o);
  REQUIRE(ok.has_value());
  CHECK(ok->find(
            "RV_CT_BINDS='/scratch/my work',/scratch/alice/.cache/rv,/scratch/alice/.rv',/data/my sets:/data:ro'\n") !=
        std::string::npos);
}

// A node whose check task never ran (its launch failed, the node went away) printed no line: that is
// no pass. The job ends with 96 naming the node, as Pyxis's check does.
TEST_CASE("container: Apptainer on 2 nodes: a node without its check line fails the preflight")
{
  ContainerNode node;
  auto s = base_strategy();
  s.nodes = 2;
  auto o = node.options_with("docker://rv-test/pytorch:24.05", false);
  o.command = "touch '" + node.path("marker") + "'";
  // srun runs the check on n1 only; n2's task fails to launch (any other srun: the fake's).
  rv::testing::write_text(node.path("bin/srun"),
                          "#!/bin/bash\ncase \" $* \" in *\" _rv_ct_check \"*)\n"
                          "  printf 'srun %s\\n' \"$*\" >>\"$FAKE_LOG\"\n"
                          "  SLURM_NODEID=0 bash -c _rv_ct_check\n"
                          "  echo 'srun: error: Task launch for StepId=632.1 failed on node n2: Communication "
                          "connection failure' >&2\n  exit 1 ;;\nesac\nexec '" RV_SOURCE_DIR
                          "/tests/fakes/bin/srun' \"$@\"\n");
  fs::permissions(node.dir / "bin" / "srun", fs::perms::owner_all);
  CHECK(node.run(o, s, "632", 2, "0,1", "FAKE_HOSTNAMES='n1 n2'") == 96);
  CHECK_FALSE(fs::exists(node.path("marker")));
  const auto verdict = rv::testing::read_text(preflight_verdict_path(o.remote_root, "req-632", "632"));
  CHECK(verdict == "rv preflight: FAIL node=n2 reason=the container check did not answer (apptainer, srun exit 1): "
                   "srun: error: Task launch for StepId=632.1 failed on node n2: Communication connection failure\n");
  CHECK(node.read("e.632").find("rv preflight: ok node=n1 container=1 gpus=2/2") != std::string::npos);
}

TEST_CASE("container: the pulled image's file name is safe and stable")
{
  const auto a = pulled_image_name("docker://nvcr.io/nvidia/pytorch:24.05-py3");
  CHECK(a.starts_with("nvcr.io_nvidia_pytorch_24.05-py3-"));
  CHECK(a.ends_with(".sif"));
  CHECK(a == pulled_image_name("docker://nvcr.io/nvidia/pytorch:24.05-py3"));
  CHECK(a != pulled_image_name("docker://nvcr.io/nvidia_pytorch:24.05-py3")); // same safe name, other hash
  CHECK(pulled_image_name("docker://x/" + std::string(300, 'a')).size() < 120);
}

TEST_CASE("container: the check inside counts a real H200's nvidia-smi -L against the GPUs Slurm granted")
{
  ContainerNode node;
  auto o = node.options_with("docker://rv-test/h200:1", false);
  o.command = "touch '" + node.path("marker") + "'";
  REQUIRE(node.run(o, base_strategy(), "651", 1, "0") == 0);
  CHECK(node.read("e.651").find("rv preflight: ok node=n1 container=1 gpus=1/1\n") != std::string::npos);
  CHECK(fs::exists(node.path("marker")));
  fs::remove(node.path("marker"));
  // Two granted, one listed inside: the node's fault (raced again without it).
  CHECK(node.run(o, base_strategy(), "652", 1, "0,1") == 96);
  CHECK(rv::testing::read_text(preflight_verdict_path(o.remote_root, "req-652", "652")) ==
        "rv preflight: FAIL node=n1 reason=the container sees 1 of the 2 GPU(s) Slurm granted\n");
  CHECK_FALSE(fs::exists(node.path("marker")));
}
