#include "sync/transfer.hpp"

#include "core/interrupt.hpp"
#include "core/process/shell.hpp"
#include "core/process/ssh_runner.hpp"

#include "core/process/local_runner.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace rv::sync {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Applies deletions and directory creation below $1, from NUL-separated records on stdin:
// R<path> rm -f, X<path> rm -rf, D<path> rmdir (when empty), M<path> mkdir -p.
constexpr const char* k_apply = R"sh(mkdir -p -- "$1" && cd -- "$1" || exit 1
status=0
while IFS= read -r -d '' rec; do
  p=${rec#?}
  case $rec in
    R*) rm -f -- "$p" || status=1 ;;
    X*) rm -rf -- "$p" || status=1 ;;
    D*) rmdir -- "$p" 2>/dev/null ;;
    M*) mkdir -p -- "$p" || status=1 ;;
  esac
done
exit $status)sh";

std::string parent_of(const std::string& path)
{
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool is_local(const SshTarget& t)
{
  return t.destination.empty();
}

// "Total bytes sent: 1,234" in rsync --stats output.
std::uint64_t rsync_bytes_sent(std::string_view out, std::string_view key)
{
  auto pos = out.find(key);
  if (pos == std::string_view::npos) {
    return 0;
  }
  std::uint64_t n = 0;
  for (auto i = pos + key.size(); i < out.size() && out[i] != '\n'; ++i) {
    if (out[i] >= '0' && out[i] <= '9') {
      n = n * 10 + static_cast<std::uint64_t>(out[i] - '0');
    } else if (out[i] != ',' && out[i] != ' ' && out[i] != '.') {
      break;
    }
  }
  return n;
}

// Decides the transport: rsync when asked or when both sides have it (and ssh is there).
Result<std::string> choose_transport(const PushOptions& o, bool remote_has_rsync)
{
  const bool local_ok = proc::on_path("rsync") && (is_local(o.ssh) || proc::on_path("ssh"));
  if (o.transport == "rsync") {
    if (!local_ok || !remote_has_rsync) {
      return fail(ErrorCode::usage,
                  fmt::format("sync_transport is rsync but rsync is missing {}", !local_ok ? "here (or ssh is)" : "on the cluster"),
                  "install rsync on both sides, or set sync_transport to auto or sftp");
    }
    return std::string("rsync");
  }
  if (o.transport == "sftp") {
    return std::string("sftp");
  }
  if (o.transport != "auto") {
    return fail(ErrorCode::config, fmt::format("unknown sync_transport '{}'", o.transport), "use auto, rsync or sftp");
  }
  return std::string(local_ok && remote_has_rsync ? "rsync" : "sftp");
}

struct RemoteListing {
  bool has_rsync = false;
  std::vector<RemoteEntry> entries;
};

// One round trip: the manifest of `dir` and whether the cluster has rsync.
Result<RemoteListing> list_remote(proc::Runner& remote, const std::string& dir)
{
  proc::Command probe;
  probe.argv = {"sh", "-c", "command -v rsync"};
  probe.timeout = std::chrono::seconds(30);
  RV_TRY(outs, remote.run_batch({manifest_command(dir), probe}));
  if (outs.size() != 2) {
    return fail(ErrorCode::parse, "unexpected reply to the remote listing");
  }
  if (!outs[0].ok()) {
    return fail(ErrorCode::io, fmt::format("cannot list {} on {}: {}", dir, remote.where(), outs[0].err),
                "check the path and its permissions");
  }
  RV_TRY(entries, parse_manifest(outs[0].out));
  return RemoteListing{outs[1].ok(), std::move(entries)};
}

Result<std::uint64_t> rsync_files(proc::Runner& local, const PushOptions& o, const std::string& from,
                                  const std::string& to, const std::vector<std::string>& paths)
{
  proc::Command c;
  c.argv = {"rsync", "-a", "-s", "--from0", "--files-from=-", "--stats", "--out-format=%n"};
  if (!is_local(o.ssh)) {
    RV_TRY(ssh, rsync_ssh_command(o.ssh));
    c.argv.push_back("-e");
    c.argv.push_back(ssh);
  }
  c.argv.push_back(from);
  c.argv.push_back(to);
  std::string list;
  for (const auto& p : paths) {
    list += p;
    list += '\0';
  }
  c.stdin_data = std::move(list);
  c.timeout = std::chrono::milliseconds(0);
  if (o.progress) {
    c.on_stdout = [&o](std::string_view s) {
      // rsync prints one name a line, then the stats: pass the names on.
      while (!s.empty()) {
        auto nl = s.find('\n');
        auto line = s.substr(0, nl);
        if (!line.empty() && line.find(": ") == std::string_view::npos && !line.starts_with("Number of") &&
            !line.starts_with("Total") && !line.starts_with("sent ") && !line.starts_with("File list") &&
            !line.starts_with("Literal") && !line.starts_with("Matched") && !line.starts_with("total size")) {
          o.progress(line);
        }
        if (nl == std::string_view::npos) {
          break;
        }
        s.remove_prefix(nl + 1);
      }
    };
  }
  spdlog::debug("sync: {}", proc::shell_join(c.argv));
  RV_TRY(out, local.run(c));
  if (!out.ok()) {
    auto err = out.err;
    while (!err.empty() && err.back() == '\n') {
      err.pop_back();
    }
    return fail(ErrorCode::io, fmt::format("rsync failed (exit {}): {}", out.exit_code, err),
                "check that `ssh` to the host works with the same settings; or set sync_transport=sftp");
  }
  return rsync_bytes_sent(out.out, "Total bytes sent:");
}

} // namespace

proc::Command manifest_command(const std::string& dir)
{
  proc::Command c;
  c.argv = {"sh", "-c",
            "[ -e \"$1\" ] || exit 0; cd -- \"$1\" 2>/dev/null || { find \"$1\" -maxdepth 0 -printf '%y\\0%s\\0%T@\\0%m\\0%l\\0\\0'; exit; }; "
            "find . -mindepth 1 -printf '%y\\0%s\\0%T@\\0%m\\0%l\\0%P\\0'",
            "rv-manifest", dir};
  c.timeout = std::chrono::seconds(120);
  return c;
}

Result<std::vector<RemoteEntry>> parse_manifest(std::string_view out)
{
  std::vector<RemoteEntry> entries;
  std::vector<std::string_view> fields;
  while (!out.empty()) {
    auto nul = out.find('\0');
    if (nul == std::string_view::npos) {
      return fail(ErrorCode::parse, "truncated remote file listing");
    }
    fields.push_back(out.substr(0, nul));
    out.remove_prefix(nul + 1);
    if (fields.size() < 6) {
      continue;
    }
    RemoteEntry e;
    e.type = fields[0].empty() ? '?' : fields[0][0];
    auto num = [](std::string_view s, auto& v, int base) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
      return ec == std::errc{};
    };
    auto mtime = fields[2].substr(0, fields[2].find('.'));
    if (!num(fields[1], e.size, 10) || !num(mtime, e.mtime_s, 10) || !num(fields[3], e.mode, 8)) {
      return fail(ErrorCode::parse, fmt::format("bad remote file listing entry '{}'", fields[5]));
    }
    e.link_target = std::string(fields[4]);
    e.path = std::string(fields[5]);
    entries.push_back(std::move(e));
    fields.clear();
  }
  if (!fields.empty()) {
    return fail(ErrorCode::parse, "truncated remote file listing");
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

Result<std::string> rsync_ssh_command(const SshTarget& t)
{
  RV_TRY(dest, proc::parse_destination(t.destination));
  std::vector<std::string> argv = {"ssh", "-F", t.ssh_config.empty() ? "none" : t.ssh_config,
                                   "-o", "BatchMode=yes",
                                   "-o", fmt::format("ConnectTimeout={}", t.connect_timeout_s)};
  if (!t.identity_file.empty()) {
    argv.insert(argv.end(), {"-i", t.identity_file});
  }
  if (!t.known_hosts.empty()) {
    argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + t.known_hosts});
  }
  if (dest.port != 0) {
    argv.insert(argv.end(), {"-p", std::to_string(dest.port)});
  }
  return proc::shell_join(argv);
}

Result<std::string> rsync_remote_spec(const SshTarget& t, const std::string& dir)
{
  if (is_local(t)) {
    return dir;
  }
  RV_TRY(dest, proc::parse_destination(t.destination));
  const std::string host = dest.host.find(':') != std::string::npos ? "[" + dest.host + "]" : dest.host;
  return fmt::format("{}{}:{}", dest.user.empty() ? "" : dest.user + "@", host, dir);
}

Result<PushReport> push(proc::Runner& remote, proc::Runner& local, const std::filesystem::path& root,
                        const FileSelection& sel, const std::string& remote_dir, const PushOptions& options)
{
  const auto t0 = Clock::now();
  RV_TRY(listing, list_remote(remote, remote_dir));
  PushReport report;
  report.dry_run = options.dry_run;
  report.plan = plan_transfer(sel.entries, listing.entries);
  RV_TRY(transport, choose_transport(options, listing.has_rsync));
  report.transport = transport;
  const auto& plan = report.plan;
  if (options.dry_run) {
    report.seconds = seconds_since(t0);
    return report;
  }
  // Deletions and directories: one round trip.
  std::string records;
  auto add = [&](char op, const std::string& p) {
    records += op;
    records += p;
    records += '\0';
  };
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
  proc::Command apply;
  apply.argv = {"bash", "-c", k_apply, "rv-apply", remote_dir};
  apply.stdin_data = records;
  apply.timeout = std::chrono::seconds(300);
  RV_TRY(applied, remote.run(apply));
  if (!applied.ok()) {
    return fail(ErrorCode::io, fmt::format("cannot update {} on {}: {}", remote_dir, remote.where(), applied.err),
                "check the sync_root setting and the permissions there");
  }
  if (plan.send.empty()) {
    report.seconds = seconds_since(t0);
    return report;
  }
  if (transport == "rsync") {
    std::vector<std::string> paths;
    for (const auto& e : plan.send) {
      paths.push_back(e.path);
    }
    RV_TRY(spec, rsync_remote_spec(options.ssh, remote_dir + "/"));
    RV_TRY(wire, rsync_files(local, options, root.string() + "/", spec, paths));
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
  RV_TRY(listing, list_remote(remote, remote_path));
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
  std::vector<std::string> files;
  for (const auto& e : listing.entries) {
    if (e.type == 'd') {
      if (!single_file) {
        fs::create_directories(target / e.path, ec);
      }
      continue;
    }
    if (e.type == 'f' || e.type == 'l') {
      files.push_back(e.path);
      report.bytes += e.size;
    }
  }
  report.files = files.size();
  if (transport == "rsync") {
    RV_TRY(spec, rsync_remote_spec(options.ssh, single_file ? base : base + "/"));
    if (single_file) {
      proc::Command c;
      c.argv = {"rsync", "-a", "-s"};
      if (!is_local(options.ssh)) {
        RV_TRY(ssh, rsync_ssh_command(options.ssh));
        c.argv.insert(c.argv.end(), {"-e", ssh});
      }
      c.argv.insert(c.argv.end(), {spec, target.string()});
      c.timeout = std::chrono::milliseconds(0);
      RV_TRY(o, local.run(c));
      if (!o.ok()) {
        return fail(ErrorCode::io, fmt::format("rsync failed (exit {}): {}", o.exit_code, o.err));
      }
    } else {
      RV_TRY(wire, rsync_files(local, options, spec, target.string() + "/", files));
      (void)wire;
    }
  } else {
    for (const auto& e : listing.entries) {
      if (interrupt_signal() != 0) {
        return fail(ErrorCode::interrupted, "interrupted while fetching files");
      }
      const auto dst = single_file ? target : target / e.path;
      const auto src = single_file ? base : base + "/" + e.path;
      if (e.type == 'l') {
        fs::remove(dst, ec);
        fs::create_symlink(e.link_target, dst, ec);
      } else if (e.type == 'f') {
        RV_TRY(n, remote.get_file(src, dst.string()));
        (void)n;
      }
      if (options.progress && e.type != 'd') {
        options.progress(e.path.empty() ? name.string() : e.path);
      }
    }
  }
  report.seconds = seconds_since(t0);
  return report;
}

} // namespace rv::sync
