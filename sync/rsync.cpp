#include "sync/rsync.hpp"

#include "core/process/shell.hpp"
#include "core/ssh/destination.hpp"
#include "core/ssh/hold.hpp"
#include "core/ssh/openssh.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rv::sync {
namespace {

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

// True for the lines of `rsync --stats` that are not file names.
bool is_stats_line(std::string_view line)
{
  for (std::string_view p : {"Number of", "Total", "sent ", "File list", "Literal", "Matched", "total size"}) {
    if (line.starts_with(p)) {
      return true;
    }
  }
  return line.find(": ") != std::string_view::npos;
}

// The start of an rsync command: `rsync -a -s [-e SSH]`.
Result<proc::Command> rsync_command(const proc::SshOptions& t)
{
  proc::Command c;
  c.argv = {"rsync", "-a", "-s"};
  if (!is_local(t)) {
    RV_TRY(ssh, rsync_ssh_command(t));
    c.argv.insert(c.argv.end(), {"-e", ssh});
  }
  c.timeout = std::chrono::milliseconds(0);
  return c;
}

Result<proc::Outcome> run_rsync(proc::Runner& local, const proc::Command& c)
{
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
  return out;
}

} // namespace

bool is_local(const proc::SshOptions& t)
{
  return t.destination.empty();
}

Result<std::string> rsync_ssh_command(const proc::SshOptions& t)
{
  RV_TRY(dest, proc::parse_destination(t.destination));
  // Through the held connection when there is one: no second login, the host key as checked
  // by rv's own session (docs/ssh.md, "rsync through the held connection"). The holder is looked
  // up with the very options SshRunner holds with, so both name the same socket.
  if (auto live = proc::hold::find_live(t)) {
    std::string relay;
    for (const auto& w : proc::hold::relay_command(live->path())) {
      relay += (relay.empty() ? "" : " ") + proc::rsync_quote(w);
    }
    return relay;
  }
  std::vector<std::string> argv = {"ssh",
                                   "-F",
                                   t.ssh_config.empty() ? "none" : t.ssh_config,
                                   "-o",
                                   "BatchMode=yes",
                                   "-o",
                                   "StrictHostKeyChecking=yes",
                                   "-o",
                                   fmt::format("ConnectTimeout={}", t.connect_timeout.count())};
  if (!t.identity_file.empty()) {
    argv.insert(argv.end(), {"-i", t.identity_file}); // an argv word of ssh's: taken as it is
  }
  for (auto& word : proc::known_hosts_ssh_options(t.known_hosts, t.known_hosts_fallback)) {
    argv.push_back(std::move(word));
  }
  if (dest.port != 0) {
    argv.insert(argv.end(), {"-p", std::to_string(dest.port)});
  }
  std::string line;
  for (const auto& w : argv) {
    line += line.empty() ? "" : " ";
    line += proc::rsync_quote(w);
  }
  return line;
}

Result<std::string> rsync_remote_spec(const proc::SshOptions& t, const std::string& dir)
{
  if (is_local(t)) {
    return dir;
  }
  RV_TRY(dest, proc::parse_destination(t.destination));
  const std::string host = dest.host.find(':') != std::string::npos ? "[" + dest.host + "]" : dest.host;
  return fmt::format("{}{}:{}", dest.user.empty() ? "" : dest.user + "@", host, dir);
}

Result<std::uint64_t> rsync_files(proc::Runner& local, const proc::SshOptions& target,
                                  const std::function<void(std::string_view)>& progress, const std::string& from,
                                  const std::string& to, const std::vector<std::string>& paths, bool rewrite)
{
  RV_TRY(c, rsync_command(target));
  if (rewrite) {
    c.argv.push_back("--ignore-times");
  }
  c.argv.insert(c.argv.end(), {"--safe-links", "--from0", "--files-from=-", "--stats", "--out-format=%n", from, to});
  std::string list;
  for (const auto& p : paths) {
    list += p;
    list += '\0';
  }
  c.stdin_data = std::move(list);
  if (progress) {
    c.on_stdout = [&progress](std::string_view s) {
      // rsync prints one name a line, then the stats: pass the names on.
      while (!s.empty()) {
        auto nl = s.find('\n');
        auto line = s.substr(0, nl);
        if (!line.empty() && !is_stats_line(line)) {
          progress(line);
        }
        if (nl == std::string_view::npos) {
          break;
        }
        s.remove_prefix(nl + 1);
      }
    };
  }
  RV_TRY(out, run_rsync(local, c));
  return rsync_bytes_sent(out.out, "Total bytes sent:");
}

Result<void> rsync_file(proc::Runner& local, const proc::SshOptions& target, const std::string& from,
                        const std::string& to)
{
  RV_TRY(c, rsync_command(target));
  c.argv.insert(c.argv.end(), {from, to});
  RV_TRY(out, run_rsync(local, c));
  (void)out;
  return {};
}

} // namespace rv::sync
