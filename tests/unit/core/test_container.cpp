// The --container grammar and the runtime choice (core/container.hpp).

#include "core/container.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace rv;
using model::ContainerRuntime;
using model::ImageKind;
using model::RuntimeSetting;

TEST_CASE("container image: docker://, an absolute .sif or enroot squashfs, anything else says what to type")
{
  auto docker = parse_container_image("docker://nvcr.io/nvidia/pytorch:24.05-py3");
  REQUIRE(docker.has_value());
  CHECK(docker->kind == ImageKind::docker);
  CHECK(docker->text == "docker://nvcr.io/nvidia/pytorch:24.05-py3");
  CHECK(parse_container_image("/scratch/img/pytorch.sif")->kind == ImageKind::sif);
  CHECK(parse_container_image("/scratch/img/pytorch.sqsh")->kind == ImageKind::squashfs);
  CHECK(parse_container_image("/scratch/img/pytorch.squashfs")->kind == ImageKind::squashfs);

  auto bare = parse_container_image("ubuntu:22.04");
  REQUIRE_FALSE(bare.has_value());
  CHECK(bare.error().code == ErrorCode::usage);
  CHECK(bare.error().message == "--container \"ubuntu:22.04\": no registry scheme");
  CHECK(bare.error().hint == "docker://ubuntu:22.04");
  auto relative = parse_container_image("images/x.sif");
  REQUIRE_FALSE(relative.has_value());
  CHECK(relative.error().message.find("absolute path") != std::string::npos);
  for (const char* bad : {"", "docker://", "docker://-x", "docker:///abs", "library://lolcow", "/img/dir",
                          "docker://a b", "/img/a,b.sif", "docker://x\ny"}) {
    CAPTURE(bad);
    auto r = parse_container_image(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::usage);
    CHECK_FALSE(r.error().hint.empty());
    CHECK(r.error().message.find('\n') == std::string::npos); // one line, even for a line break
  }
}

TEST_CASE("container mounts: SRC:DST or SRC:DST:ro, both absolute, nothing the runtimes would split")
{
  auto ro = parse_container_mount("/scratch/data:/data:ro");
  REQUIRE(ro.has_value());
  CHECK(ro->src == "/scratch/data");
  CHECK(ro->dst == "/data");
  CHECK(ro->read_only);
  // Spaces pass the grammar: Apptainer takes them (argv); Pyxis refuses them at render (templates).
  CHECK_FALSE(parse_container_mount("/a b:/c")->read_only);
  CHECK_FALSE(parse_container_mount("/a:/b:rw")->read_only);
  for (const char* bad : {"/a", "a:/b", "/a:b", "/a:/b:x", "/a:/b:ro:x", "/a,/b:/c", "/a:/b\n", ""}) {
    CAPTURE(bad);
    auto r = parse_container_mount(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::usage);
    CHECK_FALSE(r.error().hint.empty());
  }
}

TEST_CASE("container_runtime: auto, pyxis, apptainer, singularity, a bad value names them")
{
  CHECK(parse_runtime_setting("auto") == RuntimeSetting::automatic);
  CHECK(parse_runtime_setting("singularity") == RuntimeSetting::singularity);
  auto bad = parse_runtime_setting("docker");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::config);
  CHECK(bad.error().hint.find("pyxis, apptainer or singularity") != std::string::npos);
  CHECK(to_string(RuntimeSetting::automatic) == "auto");
}

TEST_CASE("the runtime: Pyxis when srun offers it, else Apptainer, the setting overrides, a .sif needs Apptainer")
{
  model::ContainerSupport both;
  both.probed = true;
  both.pyxis = true;
  both.pyxis_evidence = "srun --help";
  both.apptainer = "apptainer";
  both.apptainer_path = "/usr/bin/apptainer";
  const auto docker = *parse_container_image("docker://ubuntu:22.04");
  const auto sif = *parse_container_image("/img/x.sif");

  auto c = choose_container_runtime(RuntimeSetting::automatic, both, docker);
  REQUIRE(c.has_value());
  CHECK(c->runtime == ContainerRuntime::pyxis);
  CHECK(c->why == "found by discovery (srun --help)");
  c = choose_container_runtime(RuntimeSetting::automatic, both, sif);
  CHECK(c->runtime == ContainerRuntime::apptainer);
  CHECK(c->program == "apptainer");
  c = choose_container_runtime(RuntimeSetting::singularity, both, docker);
  CHECK(c->runtime == ContainerRuntime::apptainer);
  CHECK(c->program == "singularity");
  CHECK(c->why == "container_runtime = singularity");

  auto pyxis_only = both;
  pyxis_only.apptainer.clear();
  auto no_sif = choose_container_runtime(RuntimeSetting::automatic, pyxis_only, sif);
  REQUIRE_FALSE(no_sif.has_value());
  CHECK(no_sif.error().message.find("needs Apptainer") != std::string::npos);
  CHECK_FALSE(choose_container_runtime(RuntimeSetting::pyxis, both, sif).has_value());

  model::ContainerSupport none;
  none.probed = true;
  auto nothing = choose_container_runtime(RuntimeSetting::automatic, none, docker);
  REQUIRE_FALSE(nothing.has_value());
  CHECK(nothing.error().message == "--container: no container runtime found on this cluster (none found)");
  CHECK(nothing.error().hint.find("container_runtime") != std::string::npos);
  // Forced, the setting wins over what discovery did not see (a probe that missed it).
  CHECK(choose_container_runtime(RuntimeSetting::pyxis, none, docker)->runtime == ContainerRuntime::pyxis);

  // The probe did not answer (a timeout; discovery caches the failure with the static facts): that
  // is not "no runtime here", and the hint is to read it again, not to ask the admins for one.
  model::ContainerSupport unknown;
  auto unanswered = choose_container_runtime(RuntimeSetting::automatic, unknown, docker);
  REQUIRE_FALSE(unanswered.has_value());
  CHECK(unanswered.error().code == ErrorCode::usage);
  CHECK(unanswered.error().message ==
        "--container: rv could not tell which container runtimes this cluster offers (its probe did not answer)");
  CHECK(unanswered.error().hint.find("--no-cache") != std::string::npos);
  CHECK(unanswered.error().hint.find("container_runtime") != std::string::npos);
  CHECK(unanswered.error().hint.find("admins") == std::string::npos);
}

TEST_CASE("Pyxis's image names: a registry host becomes enroot's REGISTRY#IMAGE")
{
  auto img = [](const char* text) { return pyxis_image(*parse_container_image(text)); };
  CHECK(img("docker://nvcr.io/nvidia/pytorch:24.05-py3") == "nvcr.io#nvidia/pytorch:24.05-py3");
  CHECK(img("docker://localhost:5000/x:1") == "localhost:5000#x:1");
  CHECK(img("docker://ubuntu:22.04") == "ubuntu:22.04");
  CHECK(img("docker://rv-test/nogpu:1") == "rv-test/nogpu:1"); // a Docker Hub user, not a host
  CHECK(img("docker://nvcr.io#nvidia/pytorch:24.05-py3") == "nvcr.io#nvidia/pytorch:24.05-py3");
  CHECK(img("/img/x.sqsh") == "/img/x.sqsh");
}
