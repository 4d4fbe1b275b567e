#include "sync/target.hpp"

#include "sync/hash.hpp"

#include <fmt/format.h>

namespace rv::sync {
namespace {

// Prints, NUL-separated: five flags (symlink, exists, directory, marked, shared: a directory that
// its group or others may write, or that the user does not own), the target's physical path,
// $HOME, its physical path, the physical path the target will have once `mkdir -p` makes it (its
// deepest existing ancestor's, plus the rest), the marker's first 512 bytes, then the physical
// path of each further argument.
constexpr const char* k_facts = R"sh(unset CDPATH
t=$1; shift
phys() { (cd -P -- "$1" 2>/dev/null && pwd -P) || :; }
l=0; [ -L "$t" ] && l=1
e=0; [ -e "$t" ] && e=1
d=0; [ -d "$t" ] && d=1
m=0; [ -f "$t/.rv-workspace" ] && [ ! -L "$t/.rv-workspace" ] && m=1
w=0; [ "$d" = 1 ] && [ -n "$(find "$t/" -maxdepth 0 \( -perm -0020 -o -perm -0002 -o ! -user "$(id -u)" \) -print)" ] && w=1
r=$t; rest=
while [ ! -d "$r" ] && [ "$r" != / ] && [ "$r" != . ]; do rest=/$(basename -- "$r")$rest; r=$(dirname -- "$r"); done
mk=; [ "$m" = 1 ] && mk=$(head -c 512 -- "$t/.rv-workspace" | tr -d '\000'; echo x) && mk=${mk%x}
printf '%s\0' "$l$e$d$m$w" "$(phys "$t")" "$HOME" "$(phys "$HOME")" "$(phys "$r")$rest" "$mk"
for q in "$@"; do printf '%s\0' "$(phys "$q")"; done)sh";

constexpr std::string_view k_proof = "proof ";

} // namespace

std::vector<std::string> protected_paths(const TargetPolicy& policy)
{
  auto all = policy.protect;
  all.insert(all.end(), policy.protect_inside.begin(), policy.protect_inside.end());
  return all;
}

proc::Command target_facts_command(const std::string& dir, const std::vector<std::string>& protect)
{
  proc::Command c;
  c.argv = {"sh", "-c", k_facts, "rv-target", dir};
  c.argv.insert(c.argv.end(), protect.begin(), protect.end());
  c.timeout = std::chrono::seconds(30);
  return c;
}

Result<std::vector<std::string_view>> split_nul_fields(std::string_view out)
{
  std::vector<std::string_view> fields;
  while (!out.empty()) {
    auto nul = out.find('\0');
    if (nul == std::string_view::npos) {
      return fail(ErrorCode::parse, "truncated answer from the cluster (a field without its NUL)");
    }
    fields.push_back(out.substr(0, nul));
    out.remove_prefix(nul + 1);
  }
  return fields;
}

Result<TargetFacts> parse_target_facts(std::string_view out, std::size_t protect_count)
{
  RV_TRY(fields, split_nul_fields(out));
  if (fields.size() != 6 + protect_count || fields[0].size() != 5 ||
      fields[0].find_first_not_of("01") != std::string::npos) {
    return fail(ErrorCode::parse, "unexpected answer about the sync target");
  }
  TargetFacts f;
  f.is_symlink = fields[0][0] == '1';
  f.exists = fields[0][1] == '1';
  f.is_dir = fields[0][2] == '1';
  f.marked = fields[0][3] == '1';
  f.shared = fields[0][4] == '1';
  f.physical = fields[1];
  f.home = fields[2];
  f.home_physical = fields[3];
  f.resolved = fields[4];
  f.marker = fields[5];
  f.protect_physical.assign(fields.begin() + 6, fields.end());
  return f;
}

std::string marker_text(std::string_view key, std::string_view dir)
{
  return fmt::format("rv workspace: rv sync mirrors the project here, deletions included\n{}{}\n", k_proof,
                     hmac_sha256_hex(key, dir));
}

bool marker_proves(std::string_view marker, std::string_view key, std::string_view dir)
{
  return !key.empty() && !dir.empty() && marker == marker_text(key, dir);
}

std::string normal_remote_path(std::string_view path)
{
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto part = path.substr(0, slash);
    if (part == "..") {
      if (!parts.empty()) {
        parts.pop_back();
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    if (slash == std::string_view::npos) {
      break;
    }
    path.remove_prefix(slash + 1);
  }
  std::string out;
  for (auto p : parts) {
    out += '/';
    out += p;
  }
  return out.empty() ? "/" : out;
}

bool same_or_ancestor(std::string_view a, std::string_view b)
{
  if (a == b || a == "/") {
    return true;
  }
  return b.size() > a.size() && b.starts_with(a) && b[a.size()] == '/';
}

Result<TargetDecision> decide_target(const std::string& dir, const TargetFacts& facts, const TargetPolicy& policy,
                                     bool remote_empty)
{
  // Every name the target goes by, against every name of every protected directory.
  std::vector<std::string> names = {normal_remote_path(dir)};
  if (!facts.physical.empty()) {
    names.push_back(normal_remote_path(facts.physical));
  }
  struct Guarded {
    std::string path;
    std::string what;
  };
  std::vector<Guarded> guarded;
  auto guard = [&](const std::string& p, const std::string& what) {
    if (!p.empty() && p.starts_with('/')) {
      guarded.push_back({normal_remote_path(p), what});
    }
  };
  guard("/", "the file system's root");
  guard(facts.home, "your home directory");
  guard(facts.home_physical, "your home directory");
  const auto all = protected_paths(policy);
  std::vector<Guarded> inside; // nothing below these either
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto what = fmt::format("rv's own directory {}", all[i]);
    const bool below_too = i >= policy.protect.size();
    guard(all[i], what);
    if (i < facts.protect_physical.size()) {
      guard(facts.protect_physical[i], what);
    }
    if (below_too) {
      for (const auto& p : {all[i], i < facts.protect_physical.size() ? facts.protect_physical[i] : std::string()}) {
        if (!p.empty() && p.starts_with('/')) {
          inside.push_back({normal_remote_path(p), what});
        }
      }
    }
  }
  const auto refuse = [&](const std::string& how, const Guarded& g) -> Result<TargetDecision> {
    return fail(ErrorCode::usage, fmt::format("rv will not push to {}: it is {}{}", dir, how, g.what),
                "push to a directory of its own (e.g. ~/projects/NAME), or give no REMOTE_DIR to use the "
                "project's workspace");
  };
  for (const auto& n : names) {
    for (const auto& g : guarded) {
      if (same_or_ancestor(n, g.path)) {
        return refuse(n == g.path ? "" : "an ancestor of ", g);
      }
    }
    for (const auto& g : inside) {
      if (same_or_ancestor(g.path, n)) {
        return refuse("inside ", g);
      }
    }
  }
  if (facts.exists && !facts.is_dir) {
    return fail(ErrorCode::usage, fmt::format("{} exists on the cluster and is not a directory", dir),
                "give a directory, or a path that does not exist yet");
  }
  TargetDecision d;
  if (!policy.marker_key.empty() && !facts.resolved.empty()) {
    d.marker_text = marker_text(policy.marker_key, facts.resolved); // what proves rv's ownership here
  }
  if (facts.shared) { // a co-user could swap what rv listed for a link between the listing and the rm (N4)
    if (policy.allow_delete) {
      return fail(ErrorCode::usage,
                  fmt::format("rv will not mirror deletions into {}: others can write there, or it is not yours", dir),
                  "push without --delete (files are added, nothing is deleted), or push to a directory only you "
                  "can write");
    }
    d.note =
        fmt::format("{} can be written by others (or is not yours): rv copies into it but deletes nothing there", dir);
    return d;
  }
  if (facts.is_symlink) {
    d.note = fmt::format("{} is a symbolic link: rv copies into it but deletes nothing there", dir);
    return d;
  }
  if (facts.marked && marker_proves(facts.marker, policy.marker_key, facts.resolved)) {
    d.mirror = true;
    return d;
  }
  if (!facts.exists || remote_empty || policy.owned || policy.allow_delete) {
    d.mirror = true;
    // Only a key can sign a marker; without one the directory is mirrored this time, unmarked.
    d.write_marker = !d.marker_text.empty();
    return d;
  }
  d.note = facts.marked ? fmt::format("{} holds a {} file that this rv did not write for it (copied, or from "
                                      "another rv), so rv deletes nothing there; --delete mirrors deletions and "
                                      "marks it",
                                      dir, k_workspace_marker)
                        : fmt::format("{} is not an rv workspace (no {} file), so rv deletes nothing there; "
                                      "--delete mirrors deletions and marks it",
                                      dir, k_workspace_marker);
  return d;
}

} // namespace rv::sync
