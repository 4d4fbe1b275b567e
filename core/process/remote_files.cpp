#include "core/process/remote_files.hpp"

#include "core/interrupt.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::proc::remote {
namespace {

Command with_timeout(std::vector<std::string> argv, std::chrono::seconds timeout = std::chrono::seconds(30))
{
  Command c;
  c.argv = std::move(argv);
  c.timeout = timeout;
  return c;
}

// Reads and waits change nothing: safe to run again on a new held connection (Command::repeatable).
Command read_only(Command c)
{
  c.repeatable = true;
  return c;
}

} // namespace

std::string_view abs_path_function()
{
  return R"sh(rv_abs() {
  case $1 in
    /*) ;;
    *) [ -n "$HOME" ] || { echo 'rv: $HOME is not set on the login node' >&2; return 1; } ;;
  esac
  case $1 in
    '~') printf '%s\n' "$HOME" ;;
    '~/'*) printf '%s\n' "$HOME/${1#\~/}" ;;
    '~'*) printf 'rv: %s: ~user paths are not supported; give the full path\n' "$1" >&2; return 1 ;;
    /*) printf '%s\n' "$1" ;;
    '') printf '%s\n' "$HOME" ;;
    *) printf '%s\n' "$HOME/$1" ;;
  esac
}
)sh";
}

Command resolve_command(const std::vector<std::string>& paths)
{
  std::string script(abs_path_function());
  script += "for p in \"$@\"; do a=$(rv_abs \"$p\") || exit 1; printf '%s\\0' \"$a\"; done";
  std::vector<std::string> argv = {"sh", "-c", script, "rv-resolve"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  return read_only(with_timeout(std::move(argv)));
}

Command resolving(const Command& cmd, const std::vector<std::string>& paths)
{
  std::string mask;
  for (std::size_t i = 0; i < cmd.argv.size(); ++i) {
    const bool script = i == 2 && cmd.argv[1] == "-c"; // PROG -c SCRIPT
    const bool path = i > 0 && !script && std::find(paths.begin(), paths.end(), cmd.argv[i]) != paths.end();
    mask += path ? '1' : '0';
  }
  Command c = cmd;
  std::string script(abs_path_function());
  // The arguments are rebuilt behind the originals, each resolved where the mask says, then the
  // originals are shifted away: "$@" is the command, with no word split or globbed.
  script += "m=$1; shift; n=$#\n"
            "for a in \"$@\"; do\n"
            "  case $m in 1*) a=$(rv_abs \"$a\") || exit 1 ;; esac\n"
            "  m=${m#?}\n"
            "  set -- \"$@\" \"$a\"\n"
            "done\n"
            "shift \"$n\"\n"
            "exec \"$@\"";
  c.argv = {"sh", "-c", script, "rv-resolving", mask};
  c.argv.insert(c.argv.end(), cmd.argv.begin(), cmd.argv.end());
  return c;
}

Result<std::vector<std::string>> resolve(Runner& runner, const std::vector<std::string>& paths)
{
  RV_TRY(o, runner.run(resolve_command(paths)));
  return read_resolved(o, paths, runner.where());
}

Result<std::vector<std::string>> read_resolved(const Outcome& o, const std::vector<std::string>& paths,
                                               const std::string& where)
{
  std::vector<std::string> out;
  std::string_view rest = o.out;
  while (!rest.empty()) {
    auto nul = rest.find('\0');
    if (nul == std::string_view::npos) {
      break;
    }
    out.emplace_back(rest.substr(0, nul));
    rest.remove_prefix(nul + 1);
  }
  if (!o.ok() || out.size() != paths.size()) {
    auto why = o.err;
    while (!why.empty() && why.back() == '\n') {
      why.pop_back();
    }
    return fail(ErrorCode::io,
                fmt::format("cannot resolve {} on {}{}", fmt::join(paths, ", "), where, why.empty() ? "" : ": " + why),
                "check the path settings (rv config show)");
  }
  for (const auto& p : out) {
    if (!p.starts_with('/')) {
      return fail(ErrorCode::io,
                  fmt::format("{} resolved to '{}' on {}, not an absolute path", fmt::join(paths, ", "), p, where),
                  "is $HOME set on the login node?");
    }
  }
  return out;
}

Command read_command(const std::string& path)
{
  return read_only(with_timeout({"cat", "--", path}));
}

Command read_from_command(const std::string& path, std::size_t offset, std::size_t max_bytes)
{
  // $0 is "tail": what its errors are named after.
  return read_only(with_timeout({"sh", "-c",
                                 "[ -e \"$1\" ] || { echo \"$0: $1: No such file or directory\" >&2; exit 1; }; "
                                 "[ -r \"$1\" ] || { echo \"$0: cannot read $1\" >&2; exit 1; }; "
                                 "tail -c \"+$2\" -- \"$1\" | head -c \"$3\"",
                                 "tail", path, std::to_string(offset + 1), std::to_string(max_bytes)}));
}

Command wait_for_growth_command(const std::vector<Watched>& files, std::chrono::milliseconds max)
{
  // $1 = the looks left (one per 0.2 s), then PATH SIZE pairs. A file that is not there counts
  // as empty; `$((...))` reads wc's number with or without leading blanks. A file rv has read
  // nothing of (size 0: a claim not written yet, a job's first output) is looked at every 0.05 s
  // with `[ -s ]`, a test of the shell's own (no process); one rv has read is looked at with wc
  // every fourth tick, every 0.2 s, as before. What a look costs the login node is one `sleep`
  // a tick (docs/benchmarks.md).
  std::vector<std::string> argv = {
      "sh", "-c",
      "n=$1; shift; t=0\n"
      "while :; do\n"
      "  p=\n"
      "  for a in \"$@\"; do\n"
      "    if [ -z \"$p\" ]; then p=$a; continue; fi\n"
      "    if [ \"$a\" = 0 ]; then [ -s \"$p\" ] && exit 0\n"
      "    elif [ \"$t\" = 0 ]; then\n"
      "      s=0; [ -f \"$p\" ] && s=$(($(wc -c <\"$p\" 2>/dev/null || echo 0)))\n"
      "      [ \"$s\" -gt \"$a\" ] && exit 0\n"
      "    fi\n"
      "    p=\n"
      "  done\n"
      "  if [ \"$t\" = 0 ]; then [ \"$n\" -gt 0 ] || exit 0; n=$((n-1)); fi\n"
      "  if sleep 0.05 2>/dev/null; then t=$(((t+1)%4)); else sleep 1; n=$((n-4)); t=0; fi\n"
      "done",
      "rv-wait", std::to_string(std::max<long long>(0, max.count() / 200))};
  for (const auto& f : files) {
    argv.push_back(f.path);
    argv.push_back(std::to_string(f.size));
  }
  auto cmd = read_only(with_timeout(std::move(argv)));
  cmd.timeout = max + std::chrono::seconds(15);
  return cmd;
}

void wait_or_sleep(Runner& runner, Clock& clock, const Command& wait, std::chrono::steady_clock::time_point until)
{
  if (clock.now() >= until || interrupt_signal() != 0) {
    return;
  }
  if (auto w = runner.run(wait); w && w->ok()) {
    return;
  }
  sleep_until(clock, until);
}

void sleep_until(Clock& clock, std::chrono::steady_clock::time_point until)
{
  if (const auto rest = until - clock.now(); rest.count() > 0 && interrupt_signal() == 0) {
    clock.sleep_for(std::chrono::duration_cast<std::chrono::milliseconds>(rest));
  }
}

Command last_lines_command(const std::string& path, int lines)
{
  return read_only(with_timeout({"tail", "-n", std::to_string(lines < 0 ? 0 : lines), "--", path}));
}

Command write_private_command(const std::string& path, std::string content)
{
  auto c = with_timeout({"sh", "-c",
                         "umask 077 && d=$(dirname -- \"$1\") && mkdir -p -- \"$d\" && chmod 700 -- \"$d\" && "
                         "cat >\"$1.tmp\" && mv -f -- \"$1.tmp\" \"$1\"",
                         "rv-write", path});
  c.stdin_data = std::move(content);
  return c;
}

Command remove_command(const std::vector<std::string>& paths)
{
  std::vector<std::string> argv = {
      "sh", "-c",
      std::string(abs_path_function()) +
          "s=0; for p in \"$@\"; do a=$(rv_abs \"$p\") && rm -f -- \"$a\" || s=1; done; exit $s",
      "rv-rm"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  auto c = with_timeout(std::move(argv));
  c.uninterruptible = true;
  return c;
}

} // namespace rv::proc::remote
