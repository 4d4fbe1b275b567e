#include "app/run/launch/smart_exec.hpp"

#include "app/run/show/live_status.hpp"
#include "core/command/grammar.hpp"
#include "core/command/words.hpp"
#include "core/config.hpp"
#include "core/duration.hpp"
#include "core/process/remote_files.hpp"
#include "core/process/shell.hpp"
#include "core/store/key_file.hpp"
#include "core/store/record_store.hpp"
#include "sync/command.hpp"
#include "sync/deps.hpp"
#include "sync/snapshot.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rv::app {
namespace {

std::string git_label(const sync::GitInfo& g)
{
  if (!g.is_git) {
    return "not a git repository";
  }
  return fmt::format("git {}@{}{}", g.branch.empty() ? "?" : g.branch, g.commit.empty() ? "(no commits)" : g.commit,
                     g.dirty ? "*" : "");
}

void log_push(const ProjectPush& p, const std::string& where)
{
  const auto& r = p.report;
  const auto& plan = r.plan;
  for (const auto& s : p.selection.skipped) {
    spdlog::warn("not sent: {}: {}", s.path, s.why);
  }
  const auto deleted = plan.remove.size() + plan.remove_trees.size();
  if (!r.note.empty()) {
    spdlog::warn("{}{}", r.note,
                 r.kept.empty() ? std::string() : fmt::format(" ({} paths the project lacks are kept)", r.kept.size()));
  }
  if (r.dry_run) {
    spdlog::info("sync (dry run): would send {} of {} files ({}), delete {}, via {} to {} ({})", plan.send.size(),
                 p.selection.entries.size(), sync::human_bytes(plan.send_bytes), deleted, sync::to_string(r.transport),
                 p.remote_dir, where);
    return;
  }
  // One short line by default (#24 item 9); the transport, the paths and the counts with -v.
  spdlog::info("sync: sent {} of {} files ({}) in {:.2f} s", plan.send.size(), p.selection.entries.size(),
               sync::human_bytes(plan.send_bytes), r.seconds);
  spdlog::debug("sync: {} on the wire, deleted {}, unchanged {}, via {} to {} ({})", sync::human_bytes(r.wire_bytes),
                deleted, plan.unchanged, sync::to_string(r.transport), p.remote_dir, where);
}

} // namespace

Result<std::string> resolve_remote_path(proc::Runner& remote, const std::string& path)
{
  RV_TRY(resolved, proc::remote::resolve(remote, {path}));
  return resolved.front();
}

std::string workspaces_below(const std::string& root)
{
  return root + (root.ends_with("/") ? "workspaces" : "/workspaces");
}

Result<std::string> resolve_sync_root(proc::Runner& remote, const Settings& settings, const std::string& resolved_root)
{
  if (settings.sync_root.empty() && !settings.remote_root.empty() && resolved_root.starts_with("/")) {
    return workspaces_below(resolved_root); // what resolving remote_root/workspaces there gives
  }
  return resolve_remote_path(remote,
                             settings.sync_root.empty() ? workspaces_below(settings.remote_root) : settings.sync_root);
}

namespace {

// The slices of SyncAhead's commands and answers.
constexpr std::size_t k_ahead_resolve = 0; // the sync root, the workspace, the snapshots
constexpr std::size_t k_ahead_listing = 1; // the push's listing (sync::listing_commands), 4 commands
constexpr std::size_t k_ahead_prune = 5;   // the prune's listing (sync::prune_listing), 2 commands
constexpr std::size_t k_ahead_commands = 7;

std::vector<proc::Outcome> ahead_answers(const SyncAhead& a, std::size_t first, std::size_t count)
{
  return {a.answers.begin() + static_cast<std::ptrdiff_t>(first),
          a.answers.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

// The sync root resolved ahead, when `ahead` holds the reads for the workspace of `root` on
// `branch` below it (else "": the push resolves and lists as without it).
std::string ahead_sync_root(const SyncAhead* ahead, const std::filesystem::path& root, const sync::GitInfo& git,
                            const std::string& where)
{
  if (ahead == nullptr || ahead->root != root || ahead->answers.size() != k_ahead_commands ||
      ahead->git.branch != git.branch || ahead->git.is_git != git.is_git) {
    return {};
  }
  auto resolved = proc::remote::read_resolved(ahead->answers[k_ahead_resolve], ahead->configured, where);
  if (!resolved) {
    spdlog::debug("sync: the listing made ahead is not used: {}", resolved.error().message);
    return {};
  }
  const auto layout = sync::remote_layout((*resolved)[0], sync::project_id(root), git.is_git ? git.branch : "");
  if (layout.workspace != (*resolved)[1] || layout.snapshots != (*resolved)[2]) {
    spdlog::debug("sync: the listing made ahead is of {}, not of {}: listing again", (*resolved)[1], layout.workspace);
    return {};
  }
  return (*resolved)[0];
}

} // namespace

Result<ProjectPush> push_project(Env& env, const std::filesystem::path& root, const std::string& remote_dir,
                                 const SyncSettings& settings, bool dry_run, bool allow_delete,
                                 const std::string& resolved_root, const SyncAhead* ahead)
{
  auto& remote = env.cluster;
  auto& local = env.local;
  ProjectPush p;
  p.root = root;
  p.git = sync::read_git_info(root, local);
  RV_TRY(sel, sync::list_project_files(root, local, settings.select));
  p.selection = std::move(sel);
  // Reads made ahead are of the project's own workspace, and used only for a real push there.
  const auto ahead_root = remote_dir.empty() && !dry_run ? ahead_sync_root(ahead, root, p.git, remote.where()) : "";
  std::string sync_root = ahead_root;
  if (sync_root.empty()) {
    RV_TRY(resolved_sync_root, resolve_sync_root(remote, env.settings, resolved_root));
    sync_root = std::move(resolved_sync_root);
  }
  p.layout = sync::remote_layout(sync_root, sync::project_id(root), p.git.is_git ? p.git.branch : "");
  auto options = settings.push;
  options.dry_run = dry_run;
  options.target.protect = {sync_root};
  if (!env.workspace_key_file.empty()) {
    RV_TRY(key, store::load_or_create_key(env.workspace_key_file));
    options.target.marker_key = std::move(key);
  }
  if (remote_dir.empty()) {
    p.remote_dir = p.layout.workspace;
    options.target.owned = true;
  } else {
    // A directory the user names: rv deletes there only when it is marked as rv's or --delete
    // is given, and never pushes to $HOME, /, rv's remote root or their ancestors.
    // Nor anywhere inside rv's own state: the remote root (requests with their claims and secrets,
    // logs, checkpoints, other projects' workspaces) and the cache root (N8).
    std::vector<std::string> paths = {remote_dir, env.settings.remote_root};
    if (!env.settings.scratch_root.empty()) {
      paths.push_back(env.settings.scratch_root);
    }
    RV_TRY(resolved, proc::remote::resolve(remote, paths));
    p.remote_dir = resolved[0];
    options.target.protect_inside.assign(resolved.begin() + 1, resolved.end());
    options.target.allow_delete = allow_delete;
  }
  spdlog::debug("sync: project {} ({}, {} files, {})", root.string(), git_label(p.git), p.selection.entries.size(),
                sync::human_bytes(p.selection.total_bytes));
  if (spdlog::should_log(spdlog::level::debug)) {
    options.progress = [](std::string_view f) { spdlog::debug("sync: sent {}", f); };
  }
  LiveStatus live(env, false); // a terminal shows the phase while it lasts; the log line above says it elsewhere
  live.phase(fmt::format("syncing project ({} files, {})", p.selection.entries.size(),
                         sync::human_bytes(p.selection.total_bytes)),
             true);
  std::optional<sync::RemoteListing> listed;
  if (!ahead_root.empty()) {
    RV_TRY(read, sync::read_listing(ahead_answers(*ahead, k_ahead_listing, 4), p.remote_dir, &options.target,
                                    remote.where()));
    listed = std::move(read);
    p.prune_listing = ahead_answers(*ahead, k_ahead_prune, 2);
  }
  RV_TRY(report, sync::push(remote, local, root, p.selection, p.remote_dir, options, listed ? &*listed : nullptr));
  live.clear();
  p.report = std::move(report);
  log_push(p, remote.where());
  return p;
}

Result<std::filesystem::path> project_root_for(const std::filesystem::path& cwd, const std::string& entry_file,
                                               const std::string& home)
{
  namespace fs = std::filesystem;
  auto root = sync::find_project_root(cwd).value_or(cwd);
  if (!entry_file.empty()) {
    const auto entry = fs::weakly_canonical(cwd / entry_file);
    const auto rel = entry.lexically_relative(root);
    if (rel.empty() || rel.begin()->string() == "..") {
      auto other = sync::find_project_root(entry.parent_path()).value_or(entry.parent_path());
      if (!cwd.lexically_relative(other).empty() && cwd.lexically_relative(other).begin()->string() != "..") {
        root = other;
      } else {
        return fail(ErrorCode::usage, fmt::format("{} is outside the project at {}", entry_file, root.string()),
                    "run rv from inside the project that holds the script (the job runs from the same "
                    "relative directory)");
      }
    }
  }
  if (root == fs::path("/") || (!home.empty() && fs::weakly_canonical(home) == root)) {
    return fail(ErrorCode::usage,
                fmt::format("the project root would be {}, which rv will not send whole", root.string()),
                "run rv from a project directory (a git repository, or a folder with pyproject.toml or "
                "requirements.txt), or pass --no-sync / --workdir DIR");
  }
  return root;
}

Result<void> check_entry_exists(const std::vector<std::string>& command, const sync::CommandAnalysis& analysis,
                                const std::filesystem::path& cwd)
{
  namespace fs = std::filesystem;
  const auto words = command.size() == 1 ? command::split_words(command.front()) : command;
  std::string entry = analysis.entry;
  std::string launcher = analysis.launcher;
  bool known = analysis.known_launcher;
  if (entry.empty() && !analysis.names_local_file()) {
    // `./train.sh` names a program in the project, which the analysis finds only when it exists.
    const auto inv = command::invocation(words);
    if (inv.program != command::Invocation::npos && inv.kind == command::ProgramKind::other &&
        words[inv.program].starts_with("./")) {
      entry = words[inv.program];
      launcher = "run";
      known = true;
    }
  }
  const bool script = entry.ends_with(".py") || entry.ends_with(".sh") || entry.starts_with("./");
  if (entry.empty() || analysis.entry_is_module || !analysis.entry_file.empty() || !known || !script ||
      entry.starts_with('/') || entry.starts_with('~') || entry.find('$') != std::string::npos) {
    return {};
  }
  // A command line that changes directory first names a path on the cluster: not checked here.
  if (std::find(words.begin(), words.end(), "cd") != words.end()) {
    return {};
  }
  const fs::path typed(entry);
  const auto dir = typed.parent_path().empty() ? cwd : (cwd / typed.parent_path()).lexically_normal();
  std::vector<std::string> nearby;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      nearby.push_back((typed.parent_path() / it->path().filename()).generic_string());
    }
  }
  std::sort(nearby.begin(), nearby.end());
  const auto guess = did_you_mean(entry, nearby);
  return fail(ErrorCode::usage,
              fmt::format("{} {}: no such file in {}", launcher.empty() ? "run" : launcher, entry, dir.string()),
              guess.empty() ? "run rv from the directory that holds it, or pass --workdir DIR when the script is on "
                              "the cluster"
                            : fmt::format("did you mean {}? (--workdir DIR when the script is on the cluster)", guess));
}

namespace {

// Pushes the project at `root`, prunes old snapshots, freezes this job's, makes the venv current:
// where the job runs (the snapshot at cwd's place) and what the request records.
Result<SmartRun> snapshot_project(Env& env, const std::filesystem::path& root, const std::string& entry_file,
                                  const std::vector<std::string>& outputs, const std::string& setup = {},
                                  bool container = false, const std::string& resolved_root = {},
                                  const SyncAhead* ahead = nullptr, bool in_submission = false)
{
  auto& remote = env.cluster;
  namespace fs = std::filesystem;
  const auto& cwd = env.cwd;
  const auto& settings = env.settings.sync;
  const auto rel_dir = cwd.lexically_relative(root).generic_string();
  SmartRun run;
  run.extras.outputs = outputs;
  RV_TRY(pushed, push_project(env, root, "", settings, false, false, resolved_root, ahead));
  // The entry file must be among what was sent.
  if (!entry_file.empty()) {
    const auto rel = fs::weakly_canonical(cwd / entry_file).lexically_relative(root).generic_string();
    const bool sent = std::any_of(pushed.selection.entries.begin(), pushed.selection.entries.end(),
                                  [&](const sync::LocalEntry& e) { return e.path == rel; });
    if (!sent) {
      spdlog::warn("{} was not sent (ignored by .gitignore or .rvignore, or too large): the job will not find it", rel);
    }
  }
  // Prune old snapshots (never a live job's) and freeze this job's, in one round trip.
  const auto now = env.clock.epoch_seconds();
  run.extras.request_id = store::new_request_id();
  const auto name = sync::snapshot_name(now, run.extras.request_id);
  // Dependencies: one venv per project and branch, current while the file's hash is unchanged.
  RV_TRY(deps, sync::find_deps_file(root, rel_dir));
  const bool install_here = deps && !container && settings.deps_install == sync::DepsInstall::login;
  sync::PrunedSnapshot made;
  if (pushed.prune_listing.size() == 2) { // its listing rode ahead with the push's
    RV_TRY(pruned, sync::prune_listed(remote, pushed.layout.snapshots, now, settings.snapshot_keep_s,
                                      pushed.prune_listing[0], pushed.prune_listing[1]));
    made.pruned = std::move(pruned);
    if (in_submission && !install_here) { // the submission's first command: no round trip here
      run.extras.snapshot = SnapshotToMake{pushed.layout.workspace, pushed.layout.snapshots, name};
      made.path = sync::snapshot_path(pushed.layout.snapshots, name);
    } else { // the install below runs from it
      RV_TRY(path, sync::make_snapshot(remote, pushed.layout.workspace, pushed.layout.snapshots, name));
      made.path = std::move(path);
    }
  } else {
    RV_TRY(both, sync::prune_and_snapshot(remote, pushed.layout.workspace, pushed.layout.snapshots, name, now,
                                          settings.snapshot_keep_s));
    made = std::move(both);
  }
  if (!made.pruned.removed.empty()) {
    spdlog::info("snapshots: pruned {} older than {}", made.pruned.removed.size(),
                 format_human_duration(settings.snapshot_keep_s));
  }
  const auto& snapshot = made.path;
  spdlog::debug("snapshot: {}{}", snapshot, run.extras.snapshot ? " (made at the head of the submission's batch)" : "");
  run.workdir = sync::remote_join(snapshot, rel_dir);
  run.extras.project_key = sync::project_id(root);
  nlohmann::json record = {{"project_root", root.string()},
                           {"project_id", run.extras.project_key},
                           {"rel_dir", rel_dir},
                           {"workspace", pushed.layout.workspace},
                           {"snapshot", snapshot},
                           {"files", pushed.selection.entries.size()},
                           {"sent_files", pushed.report.plan.send.size()},
                           {"sent_bytes", pushed.report.plan.send_bytes},
                           {"transport", sync::to_string(pushed.report.transport)},
                           {"outputs", outputs}};
  if (pushed.git.is_git) {
    record["git"] = {{"branch", pushed.git.branch}, {"commit", pushed.git.commit}, {"dirty", pushed.git.dirty}};
  }
  if (deps && container) { // the job runs in the image, which brings its own Python (docs/containers.md)
    spdlog::info("deps: {} is not installed: the job runs in a container (--container)", deps->rel_path);
  } else if (deps && settings.deps_install != sync::DepsInstall::off) {
    const auto file = snapshot + "/" + deps->rel_path;
    run.extras.venv = pushed.layout.venv;
    record["venv"] = pushed.layout.venv;
    record["deps"] = {
        {"file", deps->rel_path}, {"hash", deps->hash}, {"install", sync::to_string(settings.deps_install)}};
    if (settings.deps_install == sync::DepsInstall::login) {
      spdlog::info("deps: making {} current for {} (sha256 {})", pushed.layout.venv, deps->rel_path,
                   deps->hash.substr(0, 12));
      RV_TRY(outcome, sync::ensure_venv(remote, pushed.layout.venv, *deps, file,
                                        [&](std::string_view t) { env.output.err(t); }));
      spdlog::info("deps: {} in {:.1f} s", outcome.installed ? "installed" : "up to date, install skipped",
                   outcome.seconds);
      record["deps"]["installed"] = outcome.installed;
    } else {
      run.extras.setup = sync::deps_job_setup(pushed.layout.venv, *deps, file);
    }
  }
  if (!setup.empty()) {
    // The task's set-up: once per content of the project and the line, marked beside the venv.
    const auto key = sync::setup_key(setup, pushed.selection.entries);
    run.extras.task_setup = sync::setup_job_lines(pushed.layout.branch_dir + "/setup", key, setup);
    record["setup"] = {{"line", setup}, {"key", key}};
  }
  if (!outputs.empty()) {
    spdlog::info("outputs: copied after the job to {}/outputs/<job name>-<job id>; fetch them with `rv sync pull {}`",
                 env.settings.remote_root, run.extras.request_id);
  }
  run.extras.sync = std::move(record);
  return run;
}

} // namespace

void warn_misplaced_flags(const std::vector<std::string>& command, const std::vector<std::string>& rv_flags)
{
  for (const auto& f : sync::misplaced_rv_flags(command, rv_flags)) {
    spdlog::warn("{} comes after the command, so it belongs to the command, not to rv; put rv's options before "
                 "the command (rv run {} ... CMD)",
                 f, f);
  }
}

namespace {

sync::CommandAnalysis analyze(const std::vector<std::string>& command, const std::filesystem::path& cwd)
{
  namespace fs = std::filesystem;
  return sync::analyze_command(command, [&](const std::string& p) {
    std::error_code e;
    return fs::exists(p.starts_with("/") ? fs::path(p) : cwd / p, e);
  });
}

// The project prepare_run pushes for `analysis` (nullopt: none), or why it refuses; says nothing.
Result<std::optional<std::filesystem::path>> project_to_push(const Env& env, const sync::CommandAnalysis& analysis,
                                                             const SmartRunFlags& flags)
{
  const auto& cwd = env.cwd;
  if (!flags.setup.empty()) {
    // A set-up runs once per snapshot of the project: the project is synced even when the
    // command names no local file.
    if (!flags.workdir.empty() || flags.no_sync) {
      return fail(ErrorCode::usage,
                  fmt::format("a setup runs in a snapshot of the project, and {} asks for none",
                              flags.no_sync ? "--no-sync" : "--workdir"),
                  "leave out --workdir/--no-sync, or run the set-up as part of the command");
    }
    if (!sync::find_project_root(cwd)) {
      return fail(ErrorCode::usage,
                  fmt::format("a setup runs in a snapshot of the project, and {} is in none", cwd.string()),
                  "run rv from the project (a git repository, or a folder with pyproject.toml or requirements.txt)");
    }
  } else if (!analysis.names_local_file() || !flags.workdir.empty() || flags.no_sync) {
    return std::nullopt; // nothing local, or the user asked for no sync
  }
  RV_TRY(root, project_root_for(cwd, analysis.entry_file, env.home));
  return std::optional<std::filesystem::path>(std::move(root));
}

} // namespace

Result<SmartRun> prepare_run(Env& env, const std::vector<std::string>& command, const SmartRunFlags& flags)
{
  SmartRun run;
  run.workdir = flags.workdir;
  run.extras.outputs = flags.outputs;
  const auto& cwd = env.cwd;
  if (cwd.empty()) {
    return fail(ErrorCode::io, "cannot read the current directory");
  }
  const auto analysis = analyze(command, cwd);
  if (flags.workdir.empty() && !flags.no_sync) {
    RV_TRY_VOID(check_entry_exists(command, analysis, cwd));
  }
  const bool plain_sync = flags.setup.empty() && analysis.names_local_file() && flags.workdir.empty() && !flags.no_sync;
  if (plain_sync) {
    for (const auto& a : analysis.absolute_paths) {
      spdlog::warn("{} is an absolute path on this machine; the job sees the cluster's file system", a);
    }
  }
  RV_TRY(root, project_to_push(env, analysis, flags));
  if (!root) {
    if (analysis.names_local_file()) {
      spdlog::info("{}: not syncing {}", flags.no_sync ? "--no-sync" : "--workdir given",
                   analysis.entry_file.empty() ? analysis.local_files.front() : analysis.entry_file);
    }
    return run; // nothing local: the command runs as typed, in --workdir or the home directory
  }
  if (!flags.setup.empty()) {
    spdlog::info("smart execution: the task has a setup; syncing the project {}", root->string());
  } else {
    spdlog::info("smart execution: {} names {}{}; syncing the project",
                 analysis.launcher.empty() ? "the command" : analysis.launcher,
                 analysis.entry.empty() ? analysis.local_files.front() : analysis.entry,
                 analysis.entry_is_module ? " (a module)" : "");
  }
  return snapshot_project(env, *root, analysis.entry_file, flags.outputs, flags.setup, flags.container,
                          flags.resolved_root, flags.ahead.get(), flags.snapshot_in_submission);
}

std::optional<SyncAhead> sync_ahead(Env& env, const std::vector<std::string>& command, const SmartRunFlags& flags)
{
  if (env.cwd.empty() || !flags.workdir.empty() || flags.no_sync) {
    return std::nullopt;
  }
  const auto analysis = analyze(command, env.cwd);
  if (!check_entry_exists(command, analysis, env.cwd)) {
    return std::nullopt;
  }
  auto root = project_to_push(env, analysis, flags);
  if (!root || !*root) {
    return std::nullopt;
  }
  SyncAhead a;
  a.root = **root;
  a.git = sync::read_git_info(a.root, env.local);
  const auto& s = env.settings;
  const auto sync_root = s.sync_root.empty() ? workspaces_below(s.remote_root) : s.sync_root;
  const auto layout = sync::remote_layout(sync_root, sync::project_id(a.root), a.git.is_git ? a.git.branch : "");
  a.configured = {sync_root, layout.workspace, layout.snapshots};
  // The policy's paths as push_project gives them, here as configured: resolved there by the
  // same rule, they are what it passes (the workspace is rv's own).
  sync::TargetPolicy policy;
  policy.owned = true;
  policy.protect = {sync_root};
  a.commands.push_back(proc::remote::resolve_command(a.configured));
  for (auto& c : sync::listing_commands(layout.workspace, &policy)) {
    a.commands.push_back(proc::remote::resolving(c, a.configured));
  }
  for (auto& c : sync::prune_listing(layout.snapshots)) {
    a.commands.push_back(proc::remote::resolving(c, a.configured));
  }
  if (a.commands.size() != k_ahead_commands) {
    return std::nullopt;
  }
  for (auto& c : a.commands) { // reads, run beside discovery's
    c.concurrent = true;
    c.repeatable = true;
  }
  return a;
}

Result<SmartRun> prepare_shell(Env& env, const SmartRunFlags& flags)
{
  SmartRun run;
  run.workdir = flags.workdir;
  const auto& cwd = env.cwd;
  if (!flags.workdir.empty() || flags.no_sync || cwd.empty()) {
    return run;
  }
  // Only a project (git, pyproject.toml, requirements.txt...) is sent: never a home or a /tmp.
  const auto root = sync::find_project_root(cwd);
  if (!root || !project_root_for(cwd, "", env.home)) {
    return run;
  }
  spdlog::info("smart execution: the shell starts in a snapshot of the project {}", root->string());
  return snapshot_project(env, *root, "", {}, {}, flags.container, flags.resolved_root, flags.ahead.get());
}

} // namespace rv::app
