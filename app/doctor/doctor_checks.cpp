// `rv doctor`'s pure evaluations: captured outputs in, checks out (docs/doctor.md).

#include "app/doctor/doctor.hpp"

#include "core/container.hpp"
#include "core/enum_names.hpp"
#include "core/text.hpp"
#include "slurm/gpu_faults.hpp"
#include "slurm/jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

namespace rv::app {
namespace {

DoctorCheck check(std::string name, CheckStatus status, std::string detail, std::string fix = {})
{
  return DoctorCheck{std::move(name), status, std::move(detail), std::move(fix)};
}

std::string trimmed(std::string_view s)
{
  return std::string(text::trim(s));
}

// The non-empty lines of `s`.
std::vector<std::string> lines_of(std::string_view s)
{
  std::vector<std::string> out;
  for (auto line : text::lines(s)) {
    if (!line.empty()) {
      out.emplace_back(line);
    }
  }
  return out;
}

// `key=value` lines as a map (the first '=' splits).
std::map<std::string, std::string> key_values(std::string_view s)
{
  std::map<std::string, std::string> kv;
  for (const auto& line : lines_of(s)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) {
      kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return kv;
}

std::string section(const std::map<std::string, std::string>& s, const std::string& name)
{
  auto it = s.find(name);
  return it == s.end() ? std::string() : it->second;
}

bool contains(const std::vector<std::string>& v, const std::string& x)
{
  return std::find(v.begin(), v.end(), x) != v.end();
}

constexpr EnumNames<CheckStatus, 4> k_status_names({{
    {CheckStatus::ok, "ok"},
    {CheckStatus::warn, "warn"},
    {CheckStatus::fail, "fail"},
    {CheckStatus::skip, "skip"},
}});

} // namespace

std::string_view to_string(CheckStatus s)
{
  return k_status_names.name(s);
}

std::vector<DoctorCheck> connection_checks(bool ssh, const std::string& where, const std::optional<Error>& error)
{
  if (!ssh) {
    const auto why = "rv runs the Slurm commands on this machine (no host configured)";
    return {check("ssh.reach", CheckStatus::skip, why), check("ssh.host_key", CheckStatus::skip, why),
            check("ssh.auth", CheckStatus::skip, why)};
  }
  auto code = error ? error->code : ErrorCode::generic;
  const bool unreachable = error && (code == ErrorCode::unreachable || code == ErrorCode::timeout);
  const bool key = error && (code == ErrorCode::host_key_unknown || code == ErrorCode::host_key_changed);
  const bool auth = error && code == ErrorCode::auth_failed;
  auto failed = [&](const char* name) { return check(name, CheckStatus::fail, error->message, error->hint); };
  auto skipped = [&](const char* name) { return check(name, CheckStatus::skip, "not reached"); };
  std::vector<DoctorCheck> out;
  out.push_back(unreachable ? failed("ssh.reach") : check("ssh.reach", CheckStatus::ok, where + " answers"));
  if (unreachable) {
    out.push_back(skipped("ssh.host_key"));
    out.push_back(skipped("ssh.auth"));
    return out;
  }
  out.push_back(key ? failed("ssh.host_key")
                    : check("ssh.host_key", CheckStatus::ok, "the host key is in known_hosts"));
  if (key) {
    out.push_back(skipped("ssh.auth"));
    return out;
  }
  out.push_back(auth ? failed("ssh.auth") : check("ssh.auth", CheckStatus::ok, "logged in"));
  return out;
}

std::map<std::string, std::string> split_sections(std::string_view out)
{
  std::map<std::string, std::string> sections;
  std::string current;
  std::istringstream in{std::string(out)};
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("@@")) {
      current = line.substr(2);
      sections[current];
      continue;
    }
    if (!current.empty()) {
      sections[current] += line + "\n";
    }
  }
  return sections;
}

Associations parse_associations(std::string_view sacctmgr_out)
{
  Associations a;
  for (const auto& line : lines_of(sacctmgr_out)) {
    std::vector<std::string> f;
    for (auto field : text::split(line, "|")) {
      f.emplace_back(field);
    }
    if (f.size() < 4 || line.find(' ') != std::string::npos) {
      continue; // an error message, not a row
    }
    if (!f[1].empty() && !contains(a.accounts, f[1])) {
      a.accounts.push_back(f[1]);
    }
    if (!f[2].empty() && !contains(a.partitions, f[2])) {
      a.partitions.push_back(f[2]);
    }
    for (auto q : text::split(f[3], ",")) {
      if (!q.empty() && !contains(a.qos, std::string(q))) {
        a.qos.emplace_back(q);
      }
    }
  }
  return a;
}

std::vector<DoctorCheck> login_checks(const std::map<std::string, std::string>& s, const LoginContext& ctx)
{
  std::vector<DoctorCheck> out;
  // Slurm's commands: rv needs these on the login node's PATH.
  auto cmds = key_values(section(s, "commands"));
  std::vector<std::string> missing, optional_missing;
  for (const auto& c : slurm::required_commands()) {
    if (cmds[c].empty()) {
      missing.push_back(c);
    }
  }
  for (const auto& c : slurm::accounting_commands()) {
    if (cmds[c].empty()) {
      optional_missing.push_back(c);
    }
  }
  if (!missing.empty()) {
    out.push_back(check("slurm.commands", CheckStatus::fail,
                        "not on the login node's PATH: " + text::join(missing, ", "),
                        "log in to the cluster's login node (not a gateway), or load the Slurm module in ~/.bashrc "
                        "before its non-interactive exit"));
  } else if (!optional_missing.empty()) {
    out.push_back(check("slurm.commands", CheckStatus::warn, "missing: " + text::join(optional_missing, ", "),
                        "without accounting rv cannot read final states late or your associations; ask the admins"));
  } else {
    out.push_back(
        check("slurm.commands", CheckStatus::ok,
              text::join(slurm::required_commands(), ", ") + ", " + text::join(slurm::accounting_commands(), ", ")));
  }
  auto version = trimmed(section(s, "version"));
  auto v = version.substr(version.rfind(' ') == std::string::npos ? 0 : version.rfind(' ') + 1);
  const int major = std::atoi(v.c_str());
  if (version.empty() || major == 0) {
    out.push_back(check("slurm.version", CheckStatus::fail,
                        version.empty() ? "sinfo --version printed nothing" : "unexpected: " + version,
                        "check that sinfo works on the login node (`rv exec sinfo --version`)"));
  } else if (major < 20) {
    out.push_back(check("slurm.version", CheckStatus::warn, "Slurm " + v + " (rv is tested on 20.11 and later)",
                        "some features (squeue --me) are missing before 20.11; rv falls back where it can"));
  } else {
    out.push_back(check("slurm.version", CheckStatus::ok, "Slurm " + v));
  }
  auto assoc_text = section(s, "assoc");
  auto assoc = parse_associations(assoc_text);
  const auto user = trimmed(section(s, "user"));
  if (!assoc.accounts.empty()) {
    out.push_back(
        check("slurm.associations", CheckStatus::ok,
              fmt::format("{}: account{} {}; QOS {}{}", user, assoc.accounts.size() == 1 ? "" : "s",
                          text::join(assoc.accounts, ", "),
                          assoc.qos.empty() ? std::string("-") : text::join(assoc.qos, ", "),
                          assoc.partitions.empty() ? "" : "; only partitions " + text::join(assoc.partitions, ", "))));
  } else if (lines_of(assoc_text).empty()) {
    out.push_back(check("slurm.associations", CheckStatus::fail, fmt::format("{} has no association", user),
                        "ask the cluster's admins to add you to an account (sbatch refuses jobs: Invalid account)"));
  } else {
    out.push_back(check("slurm.associations", CheckStatus::warn,
                        "sacctmgr did not answer: " + lines_of(assoc_text).front(),
                        "accounting may be off on this cluster; set `account` in the config if jobs need one"));
  }
  auto ws = key_values(section(s, "workspace"));
  if (ws["writable"] == "1") {
    std::string free_text;
    if (auto avail = std::atoll(ws["avail_kb"].c_str()); avail > 0) {
      free_text = fmt::format(", {:.1f} GiB free", static_cast<double>(avail) / (1024.0 * 1024.0));
    }
    const bool low = !ws["avail_kb"].empty() && std::atoll(ws["avail_kb"].c_str()) < 1024LL * 1024;
    out.push_back(check("workspace.writable", low ? CheckStatus::warn : CheckStatus::ok, ws["path"] + free_text,
                        low ? "less than 1 GiB free: snapshots and logs will fail; clean up or set remote_root" : ""));
  } else {
    out.push_back(check("workspace.writable", CheckStatus::fail,
                        fmt::format("cannot write {}: {}", ws["path"].empty() ? "the remote root" : ws["path"],
                                    ws["error"].empty() ? "unknown error" : ws["error"]),
                        "set `remote_root` (rv config set remote_root DIR) to a writable directory on a shared "
                        "file system"));
  }
  auto quota = section(s, "quota");
  if (!ctx.quota_configured) {
    out.push_back(check("workspace.quota", CheckStatus::skip, "no quota_command in the site profile"));
  } else {
    auto q = key_values(quota);
    auto body = lines_of(quota);
    std::erase_if(body, [](const std::string& l) { return l.starts_with("rc="); });
    const bool ok = q["rc"] == "0";
    out.push_back(
        check("workspace.quota", ok ? CheckStatus::ok : CheckStatus::warn,
              body.empty() ? "(no output)" : text::join(body, " | "),
              ok ? "" : "the profile's quota_command failed (exit " + q["rc"] + "); check it on the login node"));
  }
  auto tools = key_values(section(s, "tools"));
  if (tools["python3"].empty()) {
    out.push_back(check("login.python3", CheckStatus::warn, "no python3 on the login node",
                        "dependency installs on the login node need it; load a Python module in ~/.bashrc or use "
                        "deps_install: job"));
  } else {
    out.push_back(check("login.python3", CheckStatus::ok, tools["python3"]));
  }
  if (tools["rsync"].empty()) {
    const bool needed = ctx.transport == "rsync";
    out.push_back(check("login.rsync", needed ? CheckStatus::fail : CheckStatus::warn,
                        needed ? "no rsync on the login node, and sync_transport is rsync"
                               : "no rsync on the login node: rv syncs over SFTP (slower, no delta transfer)",
                        needed ? "install rsync there, or `rv config set sync_transport auto`"
                               : "ask the admins for rsync, or load a module that has it in ~/.bashrc"));
  } else {
    out.push_back(check("login.rsync", CheckStatus::ok, tools["rsync"]));
  }
  return out;
}

DoctorCheck containers_check(const model::ContainerSupport& offered)
{
  const bool any = offered.pyxis || !offered.apptainer.empty();
  return check("containers", any ? CheckStatus::ok : CheckStatus::skip, rv::describe(offered),
               any ? std::string() : "rv run --container needs Pyxis or Apptainer/Singularity: ask the admins");
}

} // namespace rv::app
