// `rv doctor`'s pure evaluations of the cluster's partitions and of the test job's answer.

#include "app/doctor/doctor.hpp"

#include "core/printable.hpp"
#include "core/text.hpp"
#include "slurm/gpu_faults.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace rv::app {
namespace {

// Whether the user's accounts may submit to `p` (AllowAccounts/DenyAccounts, association limits).
bool open_to(const model::Partition& p, const Associations& assoc)
{
  if (p.state != "UP") {
    return false;
  }
  if (!assoc.partitions.empty() && std::ranges::find(assoc.partitions, p.name) == assoc.partitions.end()) {
    return false;
  }
  if (assoc.accounts.empty()) {
    return true; // accounting unknown: Slurm decides
  }
  return std::any_of(assoc.accounts.begin(), assoc.accounts.end(),
                     [&](const std::string& a) { return p.admits_account(a); });
}

struct GpuSummary {
  int total = 0;
  int free = 0;
  std::vector<std::string> types;
};

GpuSummary gpus_of(const model::Cluster& c, const model::Partition& p)
{
  GpuSummary g;
  for (const auto& name : p.nodes) {
    const auto* n = c.find_node(name);
    if (!n) {
      continue;
    }
    g.total += n->gpus_total();
    if (n->usable) {
      g.free += n->gpus_free();
    }
    for (const auto& gres : n->gpus) {
      auto t = gres.type.empty() ? std::string("gpu") : gres.type;
      if (std::ranges::find(g.types, t) == g.types.end()) {
        g.types.push_back(t);
      }
    }
  }
  return g;
}

// The partition's billing weight of one GPU (the highest of its types), or a large number.
double gpu_weight(const model::Partition& p)
{
  double w = p.billing.gpu;
  for (const auto& [type, weight] : p.billing.gpu_by_type) {
    w = std::max(w, weight);
  }
  return p.billing.present && w > 0 ? w : std::numeric_limits<double>::max() / 2;
}

} // namespace

std::vector<std::string> usable_gpu_partitions(const model::Cluster& cluster, const Associations& assoc)
{
  std::vector<const model::Partition*> usable;
  for (const auto& p : cluster.partitions) {
    if (open_to(p, assoc) && gpus_of(cluster, p).total > 0) {
      usable.push_back(&p);
    }
  }
  std::stable_sort(usable.begin(), usable.end(), [&](const auto* a, const auto* b) {
    const bool fa = gpus_of(cluster, *a).free > 0, fb = gpus_of(cluster, *b).free > 0;
    if (fa != fb) {
      return fa;
    }
    return gpu_weight(*a) < gpu_weight(*b);
  });
  std::vector<std::string> names;
  for (const auto* p : usable) {
    names.push_back(p->name);
  }
  return names;
}

DoctorCheck partitions_check(const model::Cluster& cluster, const Associations& assoc, const std::string& wanted)
{
  const auto usable = usable_gpu_partitions(cluster, assoc);
  if (!wanted.empty() && std::ranges::find(usable, wanted) == usable.end()) {
    const auto* p = cluster.find_partition(wanted);
    const auto why = p == nullptr                      ? "the cluster has no such partition"
                     : gpus_of(cluster, *p).total == 0 ? "it has no GPUs"
                                                       : "it is not UP or not open to your accounts";
    return DoctorCheck{"slurm.partitions", CheckStatus::fail, fmt::format("--partition {}: {}", printable(wanted), why),
                       usable.empty() ? std::string("rv status lists the partitions")
                                      : "GPU partitions open to you: " + text::join(usable, ", ") +
                                            " (or drop -p and rv picks one)"};
  }
  std::vector<std::string> shown;
  for (const auto& name : usable) {
    const auto g = gpus_of(cluster, *cluster.find_partition(name));
    shown.push_back(fmt::format("{} ({} x{}, {} free)", name, text::join(g.types, "/"), g.total, g.free));
  }
  if (shown.empty()) {
    return DoctorCheck{"slurm.partitions", CheckStatus::fail, "no partition with GPUs is UP and open to your accounts",
                       "ask the admins which partition your account may use (AllowAccounts), or set `account`"};
  }
  return DoctorCheck{"slurm.partitions", CheckStatus::ok, text::join(shown, ", "), {}};
}

std::string preflight_fix(std::string_view reason)
{
  auto r = text::lower(reason);
  if (r.find("mismatch") != std::string::npos) {
    return "the node's NVIDIA kernel module and library differ (a driver update without a reboot): report the node "
           "to the admins; rv run excludes it and races again";
  }
  if (r.find("fallen off the bus") != std::string::npos || r.find("device handle") != std::string::npos ||
      r.find("ecc") != std::string::npos) {
    return "a GPU of the node is broken: report the node to the admins (it needs draining); rv run excludes it and "
           "races again";
  }
  if (r.find("did not answer") != std::string::npos) {
    return "nvidia-smi hangs on the node (a hung driver or GPU): report the node; rv run excludes it and races again";
  }
  if (r.find("no devices") != std::string::npos || r.find("granted") != std::string::npos) {
    return "the job cannot see the GPUs Slurm granted it (cgroup device rules, gres.conf File= lines, or the "
           "driver): report the node to the admins; rv run excludes it and races again";
  }
  if (r.find("driver") != std::string::npos) {
    return "the NVIDIA driver is not loaded on the node: report it to the admins";
  }
  if (r.find("site check") != std::string::npos) {
    return "the site profile's preflight.command failed: run it by hand on the node (rv exec srun ...)";
  }
  return "report the node to the cluster's admins; rv run excludes a node that fails the preflight";
}

std::vector<DoctorCheck> job_checks(int srun_status, std::string_view out, std::string_view err,
                                    const std::string& partition, bool image_given)
{
  std::vector<DoctorCheck> checks;
  std::map<std::string, std::string> kv;
  std::string pf_line;
  for (auto line : text::lines(out)) {
    if (line.starts_with("rv preflight: ")) {
      pf_line = std::string(line);
    } else if (auto eq = line.find('='); eq != std::string_view::npos) {
      kv[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
  }
  if (pf_line.empty() && kv.empty()) {
    auto why = text::lines(err);
    std::string first;
    for (auto l : why) {
      if (!l.empty()) {
        first = std::string(l);
        break;
      }
    }
    // "Unable to allocate resources: Requested node configuration is not available" is a
    // partition without GPUs (#24 item 12: it was blamed on a busy cluster).
    const bool no_gpus = first.find("Requested node configuration is not available") != std::string::npos;
    if (no_gpus) {
      checks.push_back(DoctorCheck{
          "job.start", CheckStatus::fail,
          fmt::format("the test job on {} did not run (srun exit {}): {}", partition, srun_status, first),
          fmt::format("no node of {} has a GPU (or what the job asks for): `rv status` lists the partitions with "
                      "GPUs; pick one with --partition",
                      partition)});
      return checks;
    }
    const bool busy =
        first.find("mmediate") != std::string::npos || first.find("Unable to allocate") != std::string::npos;
    checks.push_back(DoctorCheck{
        "job.start", busy ? CheckStatus::warn : CheckStatus::fail,
        fmt::format("the test job on {} did not run (srun exit {}): {}", partition, srun_status,
                    first.empty() ? "no output" : first),
        busy ? "no GPU was free within 2 minutes: run rv doctor later, or pick a partition with --partition"
             : "run `rv exec srun -p " + partition + " --gres=gpu:1 -t 2 nvidia-smi` to see Slurm's answer"});
    return checks;
  }
  const auto node = kv["node"].empty() ? std::string("?") : kv["node"];
  checks.push_back(
      DoctorCheck{"job.start", CheckStatus::ok, fmt::format("test job ran on {} ({})", node, partition), {}});
  if (auto f = slurm::find_preflight_failure(pf_line + "\n")) {
    checks.push_back(
        DoctorCheck{"job.gpu", CheckStatus::fail, fmt::format("{}: {}", f->node, f->reason), preflight_fix(f->reason)});
  } else if (pf_line.starts_with("rv preflight: skip")) {
    checks.push_back(DoctorCheck{"job.gpu", CheckStatus::warn,
                                 fmt::format("{}: {}", node, pf_line.substr(pf_line.find("reason=") + 7)),
                                 "nvidia-smi is not on the job's PATH: GPUs cannot be checked (set the profile's "
                                 "preflight.required only where it must be there)"});
  } else {
    std::string gpus = "?", driver = "?";
    for (auto w : text::split_ws(pf_line)) {
      if (w.starts_with("gpus=")) {
        gpus = std::string(w.substr(5));
      } else if (w.starts_with("driver=")) {
        driver = std::string(w.substr(7));
      }
    }
    checks.push_back(
        DoctorCheck{"job.gpu",
                    CheckStatus::ok,
                    fmt::format("{}: {} GPU(s) visible/granted, driver {}, CUDA_VISIBLE_DEVICES={}", node, gpus, driver,
                                kv["cuda_visible_devices"].empty() ? "(unset)" : kv["cuda_visible_devices"]),
                    {}});
  }
  if (kv["dev_nvidia"].empty()) {
    checks.push_back(DoctorCheck{"job.devices", CheckStatus::warn, "no /dev/nvidia[0-9]* device files in the job",
                                 "a CUDA program cannot open a GPU without them: ask the admins (driver, cgroup "
                                 "device rules); harmless on clusters whose GPUs are emulated"});
  } else {
    checks.push_back(DoctorCheck{"job.devices", CheckStatus::ok, kv["dev_nvidia"], {}});
  }
  if (kv["runtime"].empty()) {
    checks.push_back(DoctorCheck{"job.container", CheckStatus::skip, "no container runtime on the node", {}});
  } else if (kv["runtime"] == "enroot") { // the job script runs no enroot (Pyxis goes through srun's options)
    checks.push_back(DoctorCheck{"job.container",
                                 CheckStatus::skip,
                                 "enroot found (Pyxis): the test job runs an image with Apptainer or Singularity "
                                 "only; rv run --container checks a Pyxis image's GPUs in its preflight",
                                 {}});
  } else if (!image_given) {
    checks.push_back(DoctorCheck{
        "job.container", CheckStatus::skip, kv["runtime"] + " found; no image to test (rv doctor --image IMAGE)", {}});
  } else if (kv["container_rc"] != "0" || kv["container_gpus"] == "0") {
    checks.push_back(DoctorCheck{"job.container", CheckStatus::fail,
                                 fmt::format("{} exec --nv: exit {}, {} GPU(s) visible: {}", kv["runtime"],
                                             kv["container_rc"], kv["container_gpus"], kv["container_error"]),
                                 "pass --nv (apptainer/singularity) or use the NVIDIA container runtime hook "
                                 "(enroot/pyxis); ask the admins if nvidia-container-cli is missing on the node"});
  } else {
    checks.push_back(DoctorCheck{"job.container",
                                 CheckStatus::ok,
                                 fmt::format("{} exec --nv sees {} GPU(s)", kv["runtime"], kv["container_gpus"]),
                                 {}});
  }
  return checks;
}

} // namespace rv::app
