#include "sync/files.hpp"

#include "core/process/local_runner.hpp"
#include "core/store/beneath.hpp"
#include "core/text.hpp"
#include "sync/target.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace rv::sync {

std::string human_bytes(std::uint64_t n)
{
  if (n >= (1ull << 30)) {
    return fmt::format("{:.1f} GiB", static_cast<double>(n) / (1ull << 30));
  }
  if (n >= (1ull << 20)) {
    return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1ull << 20));
  }
  if (n >= (1ull << 10)) {
    return fmt::format("{:.1f} KiB", static_cast<double>(n) / (1ull << 10));
  }
  return fmt::format("{} B", n);
}

std::string read_text_file(const std::filesystem::path& path)
{
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::vector<std::string> split_records(std::string_view text, char sep)
{
  std::vector<std::string> out;
  for (auto record : text::split(text, std::string_view(&sep, 1))) {
    if (!record.empty()) {
      out.emplace_back(record);
    }
  }
  return out;
}

bool is_git_root(const std::filesystem::path& root)
{
  std::error_code ec;
  return std::filesystem::exists(root / ".git", ec);
}

FileSelection select_files(const std::filesystem::path& root, std::vector<std::string> candidates,
                           const IgnoreRules& rules, const SelectOptions& options)
{
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  FileSelection sel;
  for (auto& rel : candidates) {
    if (is_workspace_marker(rel)) {
      // Never sent, whatever .rvignore says: a pushed marker would mark the target as rv's (N1).
      sel.skipped.push_back({rel, "rv's workspace marker is never sent"});
      continue;
    }
    if (rules.ignored(rel, false)) {
      continue;
    }
    struct stat st {};
    const auto full = (root / rel).string();
    if (::lstat(full.c_str(), &st) != 0) {
      continue; // tracked but deleted locally: it is deleted on the cluster too
    }
    LocalEntry e;
    e.path = rel;
    e.mtime_s = st.st_mtime;
    e.mode = st.st_mode & 07777u;
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      e.type = EntryType::symlink;
      e.link_target = std::filesystem::read_symlink(full, ec).string();
      if (ec || !store::link_stays_inside(rel, e.link_target)) {
        sel.skipped.push_back({rel, fmt::format("symlink to '{}' leaves the project", e.link_target)});
        continue;
      }
    } else if (S_ISREG(st.st_mode)) {
      e.size = static_cast<std::uint64_t>(st.st_size);
      if (options.max_file_bytes > 0 && e.size > options.max_file_bytes) {
        sel.skipped.push_back({rel, fmt::format("{} is over the sync_max_file_size limit of {}", human_bytes(e.size),
                                                human_bytes(options.max_file_bytes))});
        continue;
      }
    } else if (S_ISDIR(st.st_mode)) {
      sel.skipped.push_back({rel, "a directory git lists as one entry (a submodule?)"});
      continue;
    } else {
      sel.skipped.push_back({rel, "not a regular file or symlink"});
      continue;
    }
    sel.total_bytes += e.size;
    sel.entries.push_back(std::move(e));
  }
  return sel;
}

Result<std::vector<std::string>> walk_files(const std::filesystem::path& root, const IgnoreRules& rules,
                                            std::size_t max_files)
{
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot list {}: {}", root.string(), ec.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      return fail(ErrorCode::io, fmt::format("cannot list {}: {}", root.string(), ec.message()));
    }
    const auto rel = it->path().lexically_relative(root).generic_string();
    const bool is_dir = it->is_directory(ec) && !it->is_symlink(ec);
    if (is_dir) {
      if (rules.ignored(rel, true)) {
        it.disable_recursion_pending();
      }
      continue;
    }
    out.push_back(rel);
    if (out.size() > max_files) {
      return fail(
          ErrorCode::usage,
          fmt::format("{} holds more than {} files: is it really the project's root?", root.string(), max_files),
          "run rv from the project (a git repository, or a folder with pyproject.toml or requirements.txt), "
          "or list what not to send in .rvignore");
    }
  }
  return out;
}

Result<FileSelection> list_project_files(const std::filesystem::path& root, proc::Runner& local,
                                         const SelectOptions& options)
{
  const bool git = is_git_root(root) && proc::on_path("git");
  // Later rules win: the defaults and .gitignore (without git), then .rvignore.
  IgnoreRules rules;
  rules.add_line("/.rvignore");                              // rv's own file is not needed on the cluster
  rules.add_line(fmt::format("/{}/", k_pulled_outputs_dir)); // what came from the cluster goes not back
  if (!git) {
    for (const auto& p : default_ignores()) {
      rules.add_line(p);
    }
    rules.add_text(read_text_file(root / ".gitignore"));
  }
  rules.add_text(read_text_file(root / ".rvignore"));
  std::vector<std::string> candidates;
  if (git) {
    proc::Command c;
    c.argv = {"git", "-C", root.string(), "ls-files", "-co", "--exclude-standard", "-z"};
    c.timeout = std::chrono::seconds(60);
    RV_TRY(o, local.run(c));
    if (!o.ok()) {
      return fail(ErrorCode::io, fmt::format("git ls-files failed in {}: {}", root.string(), o.err),
                  "check that `git status` works there");
    }
    candidates = split_records(o.out, '\0');
    if (candidates.size() > options.max_files) {
      return fail(ErrorCode::usage, fmt::format("{} lists more than {} files", root.string(), options.max_files),
                  "list what not to send in .rvignore");
    }
  } else {
    if (is_git_root(root)) {
      spdlog::warn("{} is a git repository but git is not installed: sending every file minus the default ignores",
                   root.string());
    }
    RV_TRY(walked, walk_files(root, rules, options.max_files));
    candidates = std::move(walked);
  }
  auto sel = select_files(root, std::move(candidates), rules, options);
  sel.git = git;
  return sel;
}

} // namespace rv::sync
