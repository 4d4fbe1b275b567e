#include "sync/snapshot.hpp"

#include "sync/files.hpp"
#include "sync/project.hpp"

#include "core/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rv::sync {

LiveJobs live_jobs(std::string_view text, const std::string& snapshots_dir)
{
  LiveJobs live;
  const std::string prefix = snapshots_dir + "/";
  for (auto line : split_records(text, '\n')) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
      line.pop_back();
    }
    const auto bar = line.find('|');
    const std::string comment = line.substr(0, bar);
    const std::string dir = bar == std::string::npos ? std::string() : line.substr(bar + 1);
    if (comment.starts_with("rv:") && comment.size() > 3) {
      live.request_ids.emplace(comment.substr(3));
    }
    if (!snapshots_dir.empty() && dir.starts_with(prefix)) {
      auto rest = dir.substr(prefix.size());
      live.snapshots.emplace(rest.substr(0, rest.find('/')));
    }
  }
  return live;
}

std::set<std::string> live_request_ids(std::string_view text)
{
  return live_jobs(text, "").request_ids;
}

std::vector<std::string> snapshots_to_prune(const std::vector<std::string>& names, std::int64_t now_s,
                                            std::int64_t keep_s, const std::set<std::string>& live,
                                            const std::set<std::string>& live_snapshots)
{
  std::vector<std::string> out;
  for (const auto& n : names) {
    auto parsed = parse_snapshot_name(n);
    if (!parsed || now_s - parsed->first <= keep_s || live.count(parsed->second) != 0 || live_snapshots.count(n) != 0) {
      continue;
    }
    out.push_back(n);
  }
  return out;
}

std::string snapshot_path(const std::string& snapshots, const std::string& name)
{
  return snapshots + "/" + name;
}

proc::Command snapshot_command(const std::string& workspace, const std::string& snapshots, const std::string& name)
{
  proc::Command c;
  c.argv = {"sh",
            "-c",
            "mkdir -p -- \"$1\" \"$2\" && tmp=\"$2/.$3.tmp\" && rm -rf -- \"$tmp\" && "
            "{ cp -al -- \"$1\" \"$tmp\" 2>/dev/null || { rm -rf -- \"$tmp\"; rsync -a --link-dest=\"$1\" -- \"$1/\" "
            "\"$tmp/\"; }; } && "
            "touch -- \"$tmp\" && mv -- \"$tmp\" \"$2/$3\"",
            "rv-snapshot",
            workspace,
            snapshots,
            name};
  c.timeout = std::chrono::seconds(300);
  return c;
}

Result<std::string> snapshot_made(const proc::Outcome& o, const std::string& where, const std::string& workspace,
                                  const std::string& snapshots, const std::string& name)
{
  if (!o.ok()) {
    const auto why = text::first_line(o.err);
    return fail(ErrorCode::io,
                fmt::format("cannot snapshot {} on {}: {}", workspace, where,
                            why.empty() ? fmt::format("exit status {}", o.status()) : why),
                "the workspace and its snapshots must be on one file system (hard links); check free space");
  }
  return snapshot_path(snapshots, name);
}

std::vector<proc::Command> prune_listing(const std::string& snapshots)
{
  proc::Command list;
  list.argv = {
      "sh", "-c",
      "[ -d \"$1\" ] || exit 0; cd -- \"$1\" && for d in *; do [ -d \"$d\" ] && printf '%s\\n' \"$d\"; done; true",
      "rv-snapshots", snapshots};
  list.timeout = std::chrono::seconds(60);
  proc::Command queue;
  queue.argv = {"sh", "-c", "squeue -h -u \"$(id -un)\" -o '%k|%Z'"};
  queue.timeout = std::chrono::seconds(60);
  return {list, queue};
}

Result<PruneReport> prune_listed(proc::Runner& remote, const std::string& snapshots, std::int64_t now_s,
                                 std::int64_t keep_s, const proc::Outcome& listed, const proc::Outcome& queued)
{
  PruneReport report;
  if (!listed.ok() || !queued.ok()) {
    report.skipped = true; // never remove a snapshot without knowing which jobs are alive
    spdlog::debug("snapshot pruning skipped: cannot list snapshots or read squeue");
    return report;
  }
  const auto names = split_records(listed.out, '\n');
  const auto live = live_jobs(queued.out, snapshots);
  report.removed = snapshots_to_prune(names, now_s, keep_s, live.request_ids, live.snapshots);
  for (const auto& n : names) {
    auto parsed = parse_snapshot_name(n);
    if (parsed && now_s - parsed->first > keep_s &&
        (live.request_ids.count(parsed->second) != 0 || live.snapshots.count(n) != 0)) {
      report.kept_live.push_back(n);
    }
  }
  if (report.removed.empty()) {
    return report;
  }
  proc::Command rm;
  rm.argv = {"sh", "-c", "cd -- \"$1\" && shift && rm -rf -- \"$@\"", "rv-prune", snapshots};
  rm.argv.insert(rm.argv.end(), report.removed.begin(), report.removed.end());
  rm.timeout = std::chrono::seconds(300);
  RV_TRY(o, remote.run(rm));
  if (!o.ok()) {
    spdlog::warn("could not remove old snapshots in {}: {}", snapshots, o.err);
  }
  return report;
}

Result<std::string> make_snapshot(proc::Runner& remote, const std::string& workspace, const std::string& snapshots,
                                  const std::string& name)
{
  RV_TRY(o, remote.run(snapshot_command(workspace, snapshots, name)));
  return snapshot_made(o, remote.where(), workspace, snapshots, name);
}

Result<PruneReport> prune_snapshots(proc::Runner& remote, const std::string& snapshots, std::int64_t now_s,
                                    std::int64_t keep_s)
{
  RV_TRY(outs, remote.run_batch(prune_listing(snapshots)));
  if (outs.size() != 2) {
    return prune_listed(remote, snapshots, now_s, keep_s, proc::Outcome{}, proc::Outcome{});
  }
  return prune_listed(remote, snapshots, now_s, keep_s, outs[0], outs[1]);
}

Result<PrunedSnapshot> prune_and_snapshot(proc::Runner& remote, const std::string& workspace,
                                          const std::string& snapshots, const std::string& name, std::int64_t now_s,
                                          std::int64_t keep_s)
{
  auto batch = prune_listing(snapshots);
  batch.push_back(snapshot_command(workspace, snapshots, name));
  RV_TRY(outs, remote.run_batch(batch));
  if (outs.size() != 3) {
    return fail(ErrorCode::parse,
                fmt::format("unexpected reply to the snapshot of {} on {}", workspace, remote.where()));
  }
  // The prune first, as when it ran alone before the snapshot: the new snapshot is younger than
  // any keep time, and was listed (if at all) as such, so it is never among what goes.
  RV_TRY(pruned, prune_listed(remote, snapshots, now_s, keep_s, outs[0], outs[1]));
  RV_TRY(path, snapshot_made(outs[2], remote.where(), workspace, snapshots, name));
  return PrunedSnapshot{std::move(pruned), std::move(path)};
}

} // namespace rv::sync
