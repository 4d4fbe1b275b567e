#include "sync/transfer.hpp"

#include "core/base64.hpp"
#include "core/enum_names.hpp"
#include "core/interrupt.hpp"
#include "core/printable.hpp"
#include "core/process/local_runner.hpp"
#include "core/random.hpp"
#include "core/store/beneath.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

namespace rv::sync {

namespace {
constexpr EnumNames<Transport, 3>
    k_transport_names({{{Transport::automatic, "auto"}, {Transport::rsync, "rsync"}, {Transport::sftp, "sftp"}}});
} // namespace

std::string_view to_string(Transport t)
{
  return t == Transport::inline_files ? "inline" : k_transport_names.name(t);
}

std::optional<Transport> parse_transport(std::string_view name)
{
  return k_transport_names.parse(name);
}
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Applies deletions and directory creation below $1, from NUL-separated records on stdin:
// W<content> marks the directory as rv's (writes .rv-workspace), R<path> rm -f, X<path> rm -rf,
// D<path> rmdir (when empty), M<path> mkdir -p. It deletes nothing unless the directory is
// marked with exactly $2 (the marker that proves rv wrote it for this directory) or by a W record,
// is not reached through a symlink and only the user can write it (N4), whatever the records say
// (docs/sync.md).
// $3 = private: the project's own workspace, made and kept 0700 (new parents too), so that a
// custom sync_root outside the 0700 remote_root does not expose the code and a `.env` (N7).
// A small push's files come after those records (sends_inline): F<path> MODE MTIME SIZE and
// L<path> TARGET SUFFIX, then E<total bytes>, then every file's bytes in base64 as one stream.
// Each file is written as put_file writes one: a new temp name beside it (mktemp: random, created
// exclusively, 0600), its mode and mtime set, then renamed over the target (`mv -T`: a link or
// file there is replaced, never written through; a directory there is an error); a link is made
// (`ln -sT`) under `<path>.rv-tmp.SUFFIX` and renamed the same way. Nothing is written below a
// directory on the way that is a symlink on the cluster (exit 4), and every temp name is written
// before any is renamed, so a short or broken stream changes no file.
constexpr const char* k_apply = R"sh(if [ "$3" = private ]; then
  (umask 077 && mkdir -p -- "$1") && chmod 700 -- "$1" || exit 1
fi
mkdir -p -- "$1" && cd -- "$1" || exit 1
own=0
if [ ! -L "$1" ] && [ -f .rv-workspace ] && [ ! -L .rv-workspace ] && [ -n "$2" ] &&
  [ "$(cat .rv-workspace; echo x)" = "${2}x" ]; then own=1; fi
if [ -n "$(find . -maxdepth 0 \( -perm -0020 -o -perm -0002 -o ! -user "$(id -u)" \) -print)" ]; then own=2; fi
status=0
fp=() fm=() ft=() fn=() ftmp=() lp=() lt=() ltmp=() lmade=() total=
while IFS= read -r -d '' rec; do
  p=${rec#?}
  case $rec in
    E*) total=$p
        break ;;
    W*) rm -f -- .rv-workspace
        printf '%s' "$p" >.rv-workspace || exit 1
        [ -L "$1" ] || [ "$own" = 2 ] || own=1 ;;
    R*|X*|D*) if [ "$own" != 1 ]; then
        printf 'refusing to delete in %s: it is not an rv workspace, or others can write there\n' "$1" >&2
        exit 3
      fi ;;
  esac
  case $rec in
    R*) rm -f -- "$p" || status=1 ;;
    X*) rm -rf -- "$p" || status=1 ;;
    D*) rmdir -- "$p" 2>/dev/null ;;
    M*) mkdir -p -- "$p" || status=1 ;;
    F*) IFS= read -r -d '' m && IFS= read -r -d '' t && IFS= read -r -d '' n || exit 1
        fp+=("$p") fm+=("$m") ft+=("$t") fn+=("$n") ;;
    L*) IFS= read -r -d '' t && IFS= read -r -d '' x || exit 1
        lp+=("$p") lt+=("$t") ltmp+=("$p.rv-tmp.$x") ;;
  esac
done
[ ${#fp[@]} -gt 0 ] || [ ${#lp[@]} -gt 0 ] || exit $status
[ -n "$total" ] || { echo 'the files sent arrived without their end record' >&2; exit 1; }
pack=
cleanup() {
  for x in "$pack" "${ftmp[@]}" "${lmade[@]}"; do [ -z "$x" ] || rm -f -- "$x"; done
}
trap cleanup EXIT
# The first directory on the way to $1 that is a symlink here, in $via (else $via is empty).
through_link() {
  local rest=$1 at=
  via=
  while [ "${rest#*/}" != "$rest" ]; do
    at=${at:+$at/}${rest%%/*}
    rest=${rest#*/}
    if [ -L "$at" ]; then via=$at; return; fi
  done
}
for p in "${fp[@]}" "${lp[@]}"; do
  through_link "$p"
  if [ -n "$via" ]; then
    printf 'refusing to write %s in %s: %s is a symbolic link there\n' "$p" "$1" "$via" >&2
    exit 4
  fi
done
if [ ${#fp[@]} -gt 0 ]; then
  pack=$(mktemp) || exit 1
  base64 -d >"$pack" && [ "$(($(wc -c <"$pack")))" = "$total" ] ||
    { echo 'the files sent arrived damaged or short' >&2; exit 1; }
fi
off=1
for i in "${!fp[@]}"; do
  ftmp[i]=$(mktemp -- "${fp[i]}.rv-tmp.XXXXXXXXXXXXXXXX") || exit 1
  tail -c "+$off" -- "$pack" | head -c "${fn[i]}" >"${ftmp[i]}" &&
    chmod -- "${fm[i]}" "${ftmp[i]}" && touch -d "@${ft[i]}" -- "${ftmp[i]}" || exit 1
  off=$((off + fn[i]))
done
for i in "${!lp[@]}"; do
  ln -sT -- "${lt[i]}" "${ltmp[i]}" || exit 1
  lmade[i]=${ltmp[i]}
done
for i in "${!fp[@]}"; do
  mv -Tf -- "${ftmp[i]}" "${fp[i]}" || exit 1
  ftmp[i]=
done
for i in "${!lp[@]}"; do
  mv -Tf -- "${ltmp[i]}" "${lp[i]}" || exit 1
  lmade[i]=
done
exit $status)sh";

std::string parent_of(const std::string& path)
{
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Decides the transport: rsync when asked or when both sides have it (and ssh is there).
Result<Transport> choose_transport(const PushOptions& o, bool remote_has_rsync)
{
  const bool local_ok = proc::on_path("rsync") && (is_local(o.ssh) || proc::on_path("ssh"));
  if (o.transport == Transport::rsync) {
    if (!local_ok || !remote_has_rsync) {
      return fail(ErrorCode::usage,
                  fmt::format("sync_transport is rsync but rsync is missing {}",
                              !local_ok ? "here (or ssh is)" : "on the cluster"),
                  "install rsync on both sides, or set sync_transport to auto or sftp");
    }
    return Transport::rsync;
  }
  if (o.transport == Transport::sftp) {
    return Transport::sftp;
  }
  return local_ok && remote_has_rsync ? Transport::rsync : Transport::sftp;
}

// One round trip: the listing's commands, run alone.
Result<RemoteListing> list_remote(proc::Runner& remote, const std::string& dir, const TargetPolicy* policy)
{
  RV_TRY(outs, remote.run_batch(listing_commands(dir, policy)));
  return read_listing(outs, dir, policy, remote.where());
}

// What the cluster says about `dir` (one round trip), before anything below it is listed: a
// refused target (the home directory, `/`) must not cost a listing of the whole tree.
Result<TargetFacts> inspect_target(proc::Runner& remote, const std::string& dir, const TargetPolicy& policy)
{
  RV_TRY(out, remote.run(target_facts_command(dir, protected_paths(policy))));
  if (!out.ok()) {
    return fail(ErrorCode::io, fmt::format("cannot inspect {} on {}: {}", dir, remote.where(), out.err));
  }
  return parse_target_facts(out.out, protected_paths(policy).size());
}

// Drops the plan's deletions into `report.kept`; fails when a kept path blocks a file to send.
Result<void> keep_remote_files(PushReport& report)
{
  auto& plan = report.plan;
  if (!plan.remove_trees.empty()) {
    return fail(ErrorCode::usage,
                fmt::format("{} is a directory on the cluster where the project has a file, and rv deletes nothing "
                            "outside its workspaces",
                            plan.remove_trees.front()),
                "remove it there, or pass --delete to mirror into this directory");
  }
  // A file or a link where the project needs a directory: making the directory means removing
  // it, and through a link to a directory every later write would land outside the target (the
  // SFTP push and `mkdir -p` followed it; rsync removed the user's link).
  for (const auto& d : plan.make_dirs) {
    if (std::find(plan.remove.begin(), plan.remove.end(), d) != plan.remove.end()) {
      return fail(ErrorCode::usage,
                  fmt::format("{} is a file or a symbolic link on the cluster where the project has a directory, "
                              "and rv deletes nothing outside its workspaces",
                              d),
                  "remove it there, or pass --delete to mirror into this directory");
    }
  }
  report.kept = std::move(plan.remove);
  report.kept.insert(report.kept.end(), plan.remove_dirs.begin(), plan.remove_dirs.end());
  plan.remove.clear();
  plan.remove_dirs.clear();
  return {};
}

// A pull writes only below its destination: every path of the cluster's listing must be plain
// relative (find prints no other; a listing with one is refused whole, before anything is written).
Result<void> check_pulled_paths(const std::vector<RemoteEntry>& entries, const std::string& remote_path,
                                const std::string& where)
{
  for (const auto& e : entries) {
    if (!store::is_plain_relative(e.path)) {
      return fail(ErrorCode::parse,
                  fmt::format("the listing of {} on {} holds the path '{}', which would leave the destination: "
                              "nothing was pulled",
                              remote_path, where, printable(e.path)),
                  "pull it again; if it persists, the login node is not answering as it should");
    }
  }
  return {};
}

// Appends `text` and its NUL terminator to the apply step's records.
void add_field(std::string& records, std::string_view text)
{
  records += text;
  records += '\0';
}

// The apply step's records for a small push's files (k_apply: F and L records, E with the total,
// then the bytes in base64), read here from below `root`.
Result<std::string> inline_records(const std::filesystem::path& root, const std::vector<LocalEntry>& send)
{
  std::string records;
  std::string bytes;
  for (const auto& e : send) {
    if (!store::is_plain_relative(e.path)) { // the selection never holds one; a caller's list might
      return fail(ErrorCode::usage, fmt::format("refusing to send '{}': not a plain relative path", printable(e.path)));
    }
    if (e.type == EntryType::symlink) {
      add_field(records, "L" + e.path);
      add_field(records, e.link_target);
      add_field(records, random_hex(8));
      continue;
    }
    const auto path = root / e.path;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return fail(ErrorCode::io, fmt::format("cannot read {}", path.string()));
    }
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    add_field(records, "F" + e.path);
    add_field(records, fmt::format("{:o}", e.mode & 07777));
    add_field(records, std::to_string(e.mtime_s));
    add_field(records, std::to_string(content.size()));
    bytes += content;
  }
  add_field(records, "E" + std::to_string(bytes.size()));
  records += base64_encode(bytes);
  return records;
}

} // namespace

std::vector<proc::Command> listing_commands(const std::string& dir, const TargetPolicy* policy)
{
  proc::Command probe;
  probe.argv = {"sh", "-c", "command -v rsync"};
  probe.timeout = std::chrono::seconds(30);
  std::vector<proc::Command> batch = {manifest_command(dir), probe};
  if (policy) {
    batch.push_back(target_facts_command(dir, protected_paths(*policy)));
    proc::Command tools; // what the apply step needs to write a small push's files itself
    tools.argv = {"sh", "-c", "command -v base64 && command -v mktemp"};
    tools.timeout = std::chrono::seconds(30);
    batch.push_back(std::move(tools));
  }
  return batch;
}

Result<RemoteListing> read_listing(const std::vector<proc::Outcome>& outs, const std::string& dir,
                                   const TargetPolicy* policy, const std::string& where)
{
  if (outs.size() != (policy ? 4u : 2u)) {
    return fail(ErrorCode::parse, "unexpected reply to the remote listing");
  }
  if (!outs[0].ok()) {
    return fail(ErrorCode::io, fmt::format("cannot list {} on {}: {}", dir, where, outs[0].err),
                "check the path and its permissions");
  }
  RemoteListing listing;
  RV_TRY(entries, parse_manifest(outs[0].out));
  // The marker is rv's, never part of the mirror.
  std::erase_if(entries, [](const RemoteEntry& e) { return e.path == k_workspace_marker; });
  listing.entries = std::move(entries);
  listing.has_rsync = outs[1].ok();
  if (policy) {
    if (!outs[2].ok()) {
      return fail(ErrorCode::io, fmt::format("cannot inspect {} on {}: {}", dir, where, outs[2].err));
    }
    RV_TRY(facts, parse_target_facts(outs[2].out, protected_paths(*policy).size()));
    listing.target = std::move(facts);
    listing.has_inline_tools = outs[3].ok();
  }
  return listing;
}

bool sends_inline(Transport setting, bool remote_has_inline_tools, const TransferPlan& plan)
{
  return setting == Transport::automatic && remote_has_inline_tools && !plan.send.empty() &&
         plan.send.size() <= k_inline_max_files && plan.send_bytes <= k_inline_max_bytes;
}

proc::Command manifest_command(const std::string& dir)
{
  proc::Command c;
  c.argv = {"sh", "-c",
            "[ -e \"$1\" ] || exit 0; cd -- \"$1\" 2>/dev/null || { find \"$1\" -maxdepth 0 -printf "
            "'%y\\0%s\\0%T@\\0%m\\0%l\\0\\0'; exit; }; "
            "find . -mindepth 1 -printf '%y\\0%s\\0%T@\\0%m\\0%l\\0%P\\0'",
            "rv-manifest", dir};
  c.timeout = std::chrono::seconds(120);
  return c;
}

Result<std::vector<RemoteEntry>> parse_manifest(std::string_view out)
{
  auto all = split_nul_fields(out);
  if (!all || all->size() % 6 != 0) {
    return fail(ErrorCode::parse, "truncated remote file listing");
  }
  auto num = [](std::string_view s, auto& v, int base) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    return ec == std::errc{};
  };
  std::vector<RemoteEntry> entries;
  for (std::size_t i = 0; i < all->size(); i += 6) {
    const auto* f = all->data() + i;
    RemoteEntry e;
    e.type = f[0].empty() ? '?' : f[0][0];
    auto mtime = f[2].substr(0, f[2].find('.'));
    if (!num(f[1], e.size, 10) || !num(mtime, e.mtime_s, 10) || !num(f[3], e.mode, 8)) {
      return fail(ErrorCode::parse, fmt::format("bad remote file listing entry '{}'", f[5]));
    }
    e.link_target = std::string(f[4]);
    e.path = std::string(f[5]);
    entries.push_back(std::move(e));
  }
  return entries;
}

TransferPlan plan_transfer(const std::vector<LocalEntry>& local, const std::vector<RemoteEntry>& remote)
{
  TransferPlan plan;
  std::map<std::string, const RemoteEntry*, std::less<>> by_path;
  for (const auto& r : remote) {
    by_path[r.path] = &r;
  }
  std::set<std::string, std::less<>> local_paths;
  std::set<std::string, std::less<>> needed_dirs;
  for (const auto& l : local) {
    local_paths.insert(l.path);
    for (auto d = parent_of(l.path); !d.empty(); d = parent_of(d)) {
      needed_dirs.insert(d);
    }
    auto it = by_path.find(l.path);
    bool same = false;
    if (it != by_path.end()) {
      const auto& r = *it->second;
      if (l.type == EntryType::symlink) {
        same = r.type == 'l' && r.link_target == l.link_target;
      } else {
        same = r.type == 'f' && r.size == l.size && r.mtime_s == l.mtime_s && (r.mode & 0777) == (l.mode & 0777);
      }
      if (!same && r.type == 'd') {
        plan.remove_trees.push_back(l.path);
      }
    }
    if (same) {
      ++plan.unchanged;
    } else {
      plan.send.push_back(l);
      plan.send_bytes += l.size;
    }
  }
  std::set<std::string, std::less<>> existing_dirs;
  for (const auto& r : remote) {
    if (r.type == 'd') {
      existing_dirs.insert(r.path);
      if (needed_dirs.count(r.path) == 0 && local_paths.count(r.path) == 0) {
        plan.remove_dirs.push_back(r.path);
      }
    } else if (local_paths.count(r.path) == 0) {
      // A file where the selection now needs a directory must go too.
      plan.remove.push_back(r.path);
    }
  }
  for (const auto& d : needed_dirs) {
    if (existing_dirs.count(d) == 0) {
      plan.make_dirs.push_back(d);
    }
  }
  // Deepest first, so that parents are empty when their turn comes.
  std::sort(plan.remove_dirs.begin(), plan.remove_dirs.end(), std::greater<>());
  return plan;
}

Result<PushReport> push(proc::Runner& remote, proc::Runner& local, const std::filesystem::path& root,
                        const FileSelection& sel, const std::string& remote_dir, const PushOptions& options,
                        const RemoteListing* listed)
{
  const auto t0 = Clock::now();
  for (const auto& e : sel.entries) {
    if (is_workspace_marker(e.path)) { // list_project_files never selects one; a caller's list might
      return fail(ErrorCode::usage, fmt::format("refusing to send {}: rv's workspace marker is never sent", e.path));
    }
  }
  if (!options.target.owned) {
    RV_TRY(facts, inspect_target(remote, remote_dir, options.target));
    RV_TRY(early, decide_target(remote_dir, facts, options.target, false));
    (void)early; // only its refusal counts here; the listing below decides the rest
  }
  std::optional<RemoteListing> fresh;
  if (!listed) {
    RV_TRY(here, list_remote(remote, remote_dir, &options.target));
    fresh = std::move(here);
    listed = &*fresh;
  }
  const auto& listing = *listed;
  RV_TRY(decision, decide_target(remote_dir, listing.target, options.target, listing.entries.empty()));
  PushReport report;
  report.dry_run = options.dry_run;
  report.plan = plan_transfer(sel.entries, listing.entries);
  report.mirrored = decision.mirror;
  report.note = decision.note;
  if (!decision.mirror) {
    RV_TRY_VOID(keep_remote_files(report));
  }
  RV_TRY(transport, choose_transport(options, listing.has_rsync));
  const auto& plan = report.plan;
  const bool inline_files = sends_inline(options.transport, listing.has_inline_tools, plan);
  report.transport = inline_files ? Transport::inline_files : transport;
  if (options.dry_run) {
    report.seconds = seconds_since(t0);
    return report;
  }
  // Deletions and directories, and a small push's files: one round trip.
  std::string records;
  auto add = [&](char op, const std::string& p) { add_field(records, op + p); };
  if (decision.write_marker) {
    add('W', decision.marker_text);
  }
  for (const auto& p : plan.remove) {
    add('R', p);
  }
  for (const auto& p : plan.remove_trees) {
    add('X', p);
  }
  for (const auto& p : plan.remove_dirs) {
    add('D', p);
  }
  for (const auto& p : plan.make_dirs) {
    add('M', p);
  }
  if (inline_files) {
    RV_TRY(files, inline_records(root, plan.send));
    records += files;
  }
  proc::Command apply;
  apply.argv = {
      "bash", "-c", k_apply, "rv-apply", remote_dir, decision.marker_text, options.target.owned ? "private" : "shared"};
  apply.stdin_data = records;
  apply.timeout = std::chrono::seconds(300);
  RV_TRY(applied, remote.run(apply));
  if (!applied.ok()) {
    return fail(ErrorCode::io, fmt::format("cannot update {} on {}: {}", remote_dir, remote.where(), applied.err),
                "check the sync_root setting and the permissions there");
  }
  if (inline_files) {
    report.wire_bytes = records.size();
    if (options.progress) {
      for (const auto& e : plan.send) {
        options.progress(e.path);
      }
    }
  }
  if (plan.send.empty() || inline_files) {
    report.seconds = seconds_since(t0);
    return report;
  }
  if (transport == Transport::rsync) {
    std::vector<std::string> paths;
    for (const auto& e : plan.send) {
      paths.push_back(e.path);
    }
    RV_TRY(spec, rsync_remote_spec(options.ssh, remote_dir + "/"));
    // Rewritten, never changed in place: a snapshot's hard link keeps the old mode.
    RV_TRY(wire, rsync_files(local, options.ssh, options.progress, root.string() + "/", spec, paths, true));
    report.wire_bytes = wire;
  } else {
    for (const auto& e : plan.send) {
      if (interrupt_signal() != 0) {
        return fail(ErrorCode::interrupted, "interrupted while sending files");
      }
      const auto dst = remote_dir + "/" + e.path;
      if (e.type == EntryType::symlink) {
        if (auto r = remote.put_symlink(e.link_target, dst); !r) {
          return std::unexpected(r.error());
        }
      } else {
        RV_TRY(n, remote.put_file((root / e.path).string(), dst, proc::FileMeta{e.mode, e.mtime_s}));
        report.wire_bytes += n;
      }
      if (options.progress) {
        options.progress(e.path);
      }
    }
  }
  report.seconds = seconds_since(t0);
  return report;
}

Result<PullReport> pull(proc::Runner& remote, proc::Runner& local, const std::string& remote_path,
                        const std::filesystem::path& local_path, const PushOptions& options)
{
  namespace fs = std::filesystem;
  const auto t0 = Clock::now();
  RV_TRY(listing, list_remote(remote, remote_path, nullptr));
  if (listing.entries.empty()) {
    proc::Command exists;
    exists.argv = {"test", "-e", remote_path};
    RV_TRY(e, remote.run(exists));
    if (!e.ok()) {
      return fail(ErrorCode::usage, fmt::format("{} does not exist on {}", remote_path, remote.where()),
                  "check the path (`rv exec ls -la DIR`); a job's outputs appear once it ends (`rv ps -a`)");
    }
  }
  RV_TRY(transport, choose_transport(options, listing.has_rsync));
  PullReport report;
  report.transport = transport;
  // A single file lists as one entry with an empty path.
  const bool single_file = listing.entries.size() == 1 && listing.entries.front().path.empty();
  std::string base = remote_path;
  while (base.size() > 1 && base.back() == '/') {
    base.pop_back();
  }
  const auto name = fs::path(base).filename();
  std::error_code ec;
  fs::path target = local_path;
  if (fs::is_directory(target, ec)) {
    target /= name;
  }
  report.local_path = target.string();
  if (single_file) {
    fs::create_directories(target.parent_path().empty() ? fs::path(".") : target.parent_path(), ec);
  } else {
    fs::create_directories(target, ec);
  }
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", target.string(), ec.message()));
  }
  if (single_file) {
    // The destination is the user's own path: fetched as named (a link named is followed there).
    const auto& only = listing.entries.front();
    if (only.type != 'f' && only.type != 'l') {
      return fail(ErrorCode::io, fmt::format("cannot read {} on {}", remote_path, remote.where()),
                  "check its permissions there (`rv exec ls -ld PATH`)");
    }
    report.files = 1;
    report.bytes = only.size;
    if (transport == Transport::rsync) {
      RV_TRY(spec, rsync_remote_spec(options.ssh, base));
      RV_TRY_VOID(rsync_file(local, options.ssh, spec, target.string()));
    } else {
      RV_TRY(n, remote.get_file(base, target.string()));
      (void)n;
    }
    if (options.progress) {
      options.progress(name.string());
    }
    report.seconds = seconds_since(t0);
    return report;
  }
  // Below the destination, every path comes from the cluster's listing: checked before anything
  // is written, and written without following a link (docs/sync.md).
  RV_TRY_VOID(check_pulled_paths(listing.entries, remote_path, remote.where()));
  RV_TRY(tree, store::BeneathDir::open(target));
  std::vector<std::string> files;
  for (const auto& e : listing.entries) {
    if (e.type == 'd') {
      RV_TRY_VOID(tree.make_dirs(e.path));
    } else if (e.type == 'l' && !store::link_stays_inside(e.path, e.link_target)) {
      report.skipped_links.push_back(e.path);
    } else if (e.type == 'f' || e.type == 'l') {
      files.push_back(e.path);
      report.bytes += e.size;
    }
  }
  report.files = files.size();
  if (transport == Transport::rsync) {
    // rsync is confined by itself (it replaces a link with a directory and, with --safe-links,
    // makes no link that leaves the tree).
    RV_TRY(spec, rsync_remote_spec(options.ssh, base + "/"));
    RV_TRY(wire, rsync_files(local, options.ssh, options.progress, spec, tree.root().string() + "/", files));
    (void)wire;
  } else {
    // Each file is fetched by path into a private directory rv just made, then moved into place.
    RV_TRY(staging, store::StagingDir::make(tree));
    const std::string fetched = "fetched";
    for (const auto& e : listing.entries) {
      if (interrupt_signal() != 0) {
        return fail(ErrorCode::interrupted, "interrupted while fetching files");
      }
      if (e.type == 'l') {
        RV_TRY(made, tree.make_symlink(e.path, e.link_target));
        if (!made) {
          continue;
        }
      } else if (e.type == 'f') {
        RV_TRY(n, remote.get_file(base + "/" + e.path, staging.path_of(fetched).string()));
        (void)n;
        RV_TRY_VOID(tree.move_in(staging.fd(), fetched, e.path));
      } else {
        continue;
      }
      if (options.progress) {
        options.progress(e.path);
      }
    }
  }
  report.seconds = seconds_since(t0);
  return report;
}

} // namespace rv::sync
