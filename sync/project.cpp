#include "sync/project.hpp"

#include "sync/files.hpp"
#include "sync/hash.hpp"

#include "core/process/local_runner.hpp"

#include <fmt/format.h>

#include <charconv>

namespace rv::sync {

std::optional<std::filesystem::path> find_project_root(const std::filesystem::path& start)
{
  std::error_code ec;
  std::optional<std::filesystem::path> marked;
  for (auto dir = start;; dir = dir.parent_path()) {
    if (is_git_root(dir)) {
      return dir;
    }
    if (!marked) {
      for (const char* m : {"pyproject.toml", "requirements.txt", "setup.py", "setup.cfg"}) {
        if (std::filesystem::exists(dir / m, ec)) {
          marked = dir;
          break;
        }
      }
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) {
      return marked;
    }
  }
}

namespace {

std::string git_line(proc::Runner& local, const std::filesystem::path& root, std::vector<std::string> args)
{
  proc::Command c;
  c.argv = {"git", "-C", root.string()};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.timeout = std::chrono::seconds(30);
  auto o = local.run(c);
  if (!o || !o->ok()) {
    return {};
  }
  auto s = o->out;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
    s.pop_back();
  }
  return s;
}

} // namespace

GitInfo read_git_info(const std::filesystem::path& root, proc::Runner& local)
{
  GitInfo g;
  if (!is_git_root(root) || !proc::on_path("git")) {
    return g;
  }
  g.is_git = true;
  g.commit = git_line(local, root, {"rev-parse", "--short", "HEAD"});
  g.branch = git_line(local, root, {"symbolic-ref", "--short", "-q", "HEAD"});
  if (g.branch.empty()) {
    g.branch = g.commit.empty() ? "" : "detached-" + g.commit;
  }
  proc::Command c;
  c.argv = {"git", "-C", root.string(), "status", "--porcelain"};
  c.timeout = std::chrono::seconds(60);
  auto o = local.run(c);
  g.dirty = o && o->ok() && !o->out.empty();
  return g;
}

std::string safe_branch(std::string_view branch)
{
  std::string out;
  for (std::size_t i = 0; i < branch.size(); ++i) {
    const char c = branch[i];
    if (c == '/') {
      out += "--";
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') {
      if (c == '-' && out.ends_with("-") && !out.ends_with("--")) {
        continue;
      }
      out += c;
    } else if (!out.ends_with("-")) {
      out += '-';
    }
  }
  while (!out.empty() && (out.front() == '-' || out.front() == '.')) {
    out.erase(0, 1);
  }
  while (!out.empty() && out.back() == '-') {
    out.pop_back();
  }
  if (out.size() > 80) {
    out.resize(80);
  }
  return out.empty() ? "_default" : out;
}

std::string project_id(const std::filesystem::path& absolute_root)
{
  auto name = absolute_root.filename().string();
  std::string safe;
  for (char c : name) {
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  }
  while (!safe.empty() && (safe.front() == '.' || safe.front() == '-')) {
    safe.erase(0, 1);
  }
  if (safe.size() > 48) {
    safe.resize(48);
  }
  if (safe.empty()) {
    safe = "project";
  }
  return safe + "-" + sha256_hex(absolute_root.lexically_normal().string()).substr(0, 12);
}

RemoteLayout remote_layout(const std::string& sync_root, const std::string& project, const std::string& branch)
{
  RemoteLayout l;
  auto root = sync_root;
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  l.project_dir = root + "/" + project;
  l.branch_dir = l.project_dir + "/" + safe_branch(branch);
  l.workspace = l.branch_dir + "/code";
  l.snapshots = l.branch_dir + "/snapshots";
  l.venv = l.branch_dir + "/venv";
  return l;
}

std::string snapshot_name(std::int64_t created_s, const std::string& request_id)
{
  return fmt::format("{}-{}", created_s, request_id);
}

std::optional<std::pair<std::int64_t, std::string>> parse_snapshot_name(std::string_view name)
{
  auto dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) {
    return std::nullopt;
  }
  std::int64_t t = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + dash, t);
  if (ec != std::errc{} || p != name.data() + dash) {
    return std::nullopt;
  }
  return std::make_pair(t, std::string(name.substr(dash + 1)));
}

std::string remote_join(const std::string& dir, const std::string& rel)
{
  if (rel.empty() || rel == ".") {
    return dir;
  }
  return dir + (dir.ends_with("/") ? "" : "/") + rel;
}

} // namespace rv::sync
