#include "core/container.hpp"

#include "core/enum_names.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv {
namespace {

constexpr EnumNames<model::RuntimeSetting, 4> k_runtime_settings({{
    {model::RuntimeSetting::automatic, "auto"},
    {model::RuntimeSetting::pyxis, "pyxis"},
    {model::RuntimeSetting::apptainer, "apptainer"},
    {model::RuntimeSetting::singularity, "singularity"},
}});

bool ct_has_control(std::string_view s)
{
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

bool ct_ends_with(std::string_view s, std::string_view suffix)
{
  return s.size() > suffix.size() && s.ends_with(suffix);
}

Result<std::string> ct_mount_path(std::string_view what, std::string_view path, std::string_view text)
{
  if (path.empty() || path.front() != '/') {
    return fail(ErrorCode::usage,
                fmt::format("--container-mount {:?}: {} {:?} is not an absolute path", text, what, path),
                "SRC:DST or SRC:DST:ro, both absolute, e.g. /scratch/data:/data:ro");
  }
  return std::string(path);
}

} // namespace

Result<model::ContainerImage> parse_container_image(std::string_view text)
{
  constexpr std::string_view k_hint = "docker://REF (docker://nvcr.io/nvidia/pytorch:24.05-py3), or an absolute "
                                      ".sif or enroot .sqsh path on the cluster";
  if (text.empty()) {
    return fail(ErrorCode::usage, "--container needs an image", std::string(k_hint));
  }
  if (ct_has_control(text) || text.find_first_of(" \t") != std::string_view::npos) {
    return fail(ErrorCode::usage,
                fmt::format("--container {:?}: an image name has no space or control character", text),
                std::string(k_hint));
  }
  model::ContainerImage image;
  image.text = std::string(text);
  constexpr std::string_view k_docker = "docker://";
  if (text.starts_with(k_docker)) {
    const auto ref = text.substr(k_docker.size());
    if (ref.empty() || ref.front() == '-' || ref.front() == '/' || ref.find("://") != std::string_view::npos) {
      return fail(ErrorCode::usage, fmt::format("--container {:?}: no image after docker://", text),
                  "e.g. docker://nvcr.io/nvidia/pytorch:24.05-py3 or docker://ubuntu:22.04");
    }
    image.kind = model::ImageKind::docker;
    return image;
  }
  if (auto scheme = text.find("://"); scheme != std::string_view::npos) {
    return fail(ErrorCode::usage,
                fmt::format("--container {:?}: rv runs docker:// images and image files, not {}://", text,
                            text.substr(0, scheme)),
                "pull it into a .sif first (apptainer pull IMAGE.sif ...) and pass its absolute path");
  }
  if (text.front() != '/') {
    const bool file = ct_ends_with(text, ".sif") || ct_ends_with(text, ".sqsh") || ct_ends_with(text, ".squashfs");
    return fail(ErrorCode::usage,
                fmt::format("--container {:?}: {}", text,
                            file ? "an image file needs its absolute path on the cluster" : "no registry scheme"),
                file ? "e.g. /scratch/you/images/pytorch.sif" : fmt::format("docker://{}", text));
  }
  if (ct_ends_with(text, ".sif")) {
    image.kind = model::ImageKind::sif;
  } else if (ct_ends_with(text, ".sqsh") || ct_ends_with(text, ".squashfs")) {
    image.kind = model::ImageKind::squashfs;
  } else {
    return fail(ErrorCode::usage, fmt::format("--container {:?}: not a .sif or .sqsh/.squashfs image file", text),
                std::string(k_hint));
  }
  if (text.find(',') != std::string_view::npos) {
    return fail(ErrorCode::usage,
                fmt::format("--container {:?}: a path with ',' cannot be passed to the runtimes", text),
                "move or link the image to a path without ','");
  }
  return image;
}

Result<model::ContainerMount> parse_container_mount(std::string_view text)
{
  constexpr std::string_view k_hint = "SRC:DST or SRC:DST:ro, both absolute, e.g. /scratch/data:/data:ro";
  if (ct_has_control(text) || text.find(',') != std::string_view::npos) {
    return fail(ErrorCode::usage,
                fmt::format("--container-mount {:?}: no ',' or control character (the runtimes split on ',')", text),
                std::string(k_hint));
  }
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) {
      break;
    }
    start = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3) {
    return fail(ErrorCode::usage, fmt::format("--container-mount {:?}: expected SRC:DST[:ro]", text),
                std::string(k_hint));
  }
  model::ContainerMount m;
  RV_TRY(src, ct_mount_path("SRC", parts[0], text));
  RV_TRY(dst, ct_mount_path("DST", parts[1], text));
  m.src = std::move(src);
  m.dst = std::move(dst);
  if (parts.size() == 3) {
    if (parts[2] != "ro" && parts[2] != "rw") {
      return fail(ErrorCode::usage, fmt::format("--container-mount {:?}: unknown mode {:?}", text, parts[2]),
                  "the mode is ro or rw (the default)");
    }
    m.read_only = parts[2] == "ro";
  }
  return m;
}

Result<model::RuntimeSetting> parse_runtime_setting(std::string_view text)
{
  if (auto s = k_runtime_settings.parse(text)) {
    return *s;
  }
  return fail(ErrorCode::config, fmt::format("container_runtime {:?} is not a container runtime", text),
              "use auto (discovery chooses), pyxis, apptainer or singularity");
}

std::string_view to_string(model::RuntimeSetting setting)
{
  return k_runtime_settings.name(setting);
}

std::string_view to_string(model::ContainerRuntime runtime)
{
  return runtime == model::ContainerRuntime::pyxis ? "pyxis" : "apptainer";
}

Result<model::ContainerChoice> choose_container_runtime(model::RuntimeSetting setting,
                                                        const model::ContainerSupport& offered,
                                                        const model::ContainerImage& image)
{
  using model::ContainerRuntime;
  using model::RuntimeSetting;
  model::ContainerChoice c;
  if (setting == RuntimeSetting::pyxis) {
    c.runtime = ContainerRuntime::pyxis;
    c.why = "container_runtime = pyxis";
  } else if (setting != RuntimeSetting::automatic) {
    c.runtime = ContainerRuntime::apptainer;
    c.program = std::string(to_string(setting));
    c.why = fmt::format("container_runtime = {}", c.program);
  } else if (offered.pyxis && image.kind != model::ImageKind::sif) {
    c.runtime = ContainerRuntime::pyxis;
    c.why = fmt::format("found by discovery ({})", offered.pyxis_evidence.empty() ? "srun" : offered.pyxis_evidence);
  } else if (!offered.apptainer.empty()) {
    c.runtime = ContainerRuntime::apptainer;
    c.program = offered.apptainer;
    c.why = fmt::format("found by discovery ({})",
                        offered.apptainer_path.empty() ? offered.apptainer : offered.apptainer_path);
  } else if (offered.pyxis) { // a .sif, and only Pyxis
    return fail(ErrorCode::usage,
                fmt::format("--container {}: a .sif image needs Apptainer or Singularity, and this cluster offers only "
                            "Pyxis (srun --container-image)",
                            image.text),
                "pass a docker:// image or an enroot .sqsh file, or set container_runtime if apptainer is there");
  } else if (!offered.probed) { // not "none": discovery caches a probe that timed out with the static facts
    return fail(ErrorCode::usage,
                "--container: rv could not tell which container runtimes this cluster offers (its probe did not "
                "answer)",
                "run again with --no-cache to probe again, or set container_runtime (rv config set container_runtime "
                "apptainer)");
  } else {
    return fail(ErrorCode::usage,
                fmt::format("--container: no container runtime found on this cluster ({})", describe(offered)),
                "ask the admins for Apptainer or Pyxis; if one is there, set container_runtime "
                "(rv config set container_runtime apptainer)");
  }
  c.pyxis_env = c.runtime == ContainerRuntime::pyxis && offered.pyxis_env;
  if (c.runtime == ContainerRuntime::pyxis && image.kind == model::ImageKind::sif) {
    return fail(ErrorCode::usage, fmt::format("--container {}: Pyxis (enroot) cannot run a .sif image", image.text),
                "pass a docker:// image or an enroot .sqsh file, or set container_runtime to apptainer");
  }
  return c;
}

std::string pyxis_image(const model::ContainerImage& image)
{
  constexpr std::string_view k_docker = "docker://";
  if (image.kind != model::ImageKind::docker) {
    return image.text;
  }
  std::string ref = image.text.substr(k_docker.size());
  const auto slash = ref.find('/');
  if (slash != std::string::npos && ref.find('#') == std::string::npos) {
    const auto first = std::string_view(ref).substr(0, slash);
    // A registry host has a dot or a port, or is localhost (Docker's own rule for the first part).
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost") {
      ref[slash] = '#';
    }
  }
  return ref;
}

std::string describe(const model::ContainerSupport& offered)
{
  if (!offered.probed) {
    return "unknown (the probe did not answer)";
  }
  std::vector<std::string> parts;
  if (offered.pyxis) {
    parts.push_back(fmt::format("pyxis ({}{})", offered.pyxis_evidence, offered.pyxis_env ? ", --container-env" : ""));
  }
  if (!offered.apptainer.empty()) {
    auto version = offered.apptainer_version;
    parts.push_back(
        fmt::format("{} ({}{}{})", offered.apptainer, offered.apptainer_path, version.empty() ? "" : ", ", version));
  }
  if (parts.empty()) {
    return offered.enroot ? "none usable (enroot without Pyxis)" : "none found";
  }
  std::string out;
  for (const auto& p : parts) {
    out += (out.empty() ? "" : ", ") + p;
  }
  return out;
}

} // namespace rv
