// rv init's steps on the cluster once the key works: Slurm associations, scratch and rv's
// directories; and the remote commands they run (pure builders and parsers).

#include "app/init/init.hpp"
#include "app/init/init_steps.hpp"
#include "app/run/launch/submit.hpp"
#include "app/settings.hpp"
#include "core/process/remote_files.hpp"
#include "core/text.hpp"
#include "slurm/discover.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::app {
namespace {

using nlohmann::json;

// The partitions `account` may use: those its associations name, else every partition whose
// AllowAccounts/DenyAccounts let it in.
std::vector<std::string> allowed_partitions(const model::Cluster& c, const std::string& account)
{
  if (!c.limits.assoc_partitions.empty()) {
    return c.limits.assoc_partitions;
  }
  std::vector<std::string> out;
  for (const auto& p : c.partitions) {
    if (p.admits_account(account)) {
      out.push_back(p.name);
    }
  }
  return out;
}

} // namespace

namespace init_steps {

Result<json> slurm(const InitOptions& o, InitAnswers& a, proc::Runner& runner, const std::string& user,
                   Prompter& prompter)
{
  RV_TRY(cluster, slurm::discover(runner, {user, {}}));
  const auto& l = cluster.limits;
  std::string account = !o.account.empty() ? o.account : !a.account.empty() ? a.account : l.default_account;
  if (o.account.empty() && o.interactive && l.accounts.size() > 1) {
    prompter.say(fmt::format("Your Slurm accounts: {} (default {})", text::join(l.accounts, ", "),
                             l.default_account.empty() ? "none" : l.default_account));
    RV_TRY(chosen, prompter.ask("Account for rv's jobs", account, "--account"));
    account = std::string(text::trim(chosen));
  }
  if (!account.empty() && !l.accounts.empty() && std::ranges::find(l.accounts, account) == l.accounts.end()) {
    return fail(ErrorCode::usage, fmt::format("you have no Slurm association with account '{}'", account),
                fmt::format("your accounts: {}", text::join(l.accounts, ", ")));
  }
  a.account = account;
  json step{{"step", "slurm"},
            {"status", "done"},
            {"user", user},
            {"accounts", l.accounts},
            {"default_account", l.default_account},
            {"account", account},
            {"qos", l.qos},
            {"partitions", allowed_partitions(cluster, account)},
            {"warnings", cluster.warnings}};
  if (l.accounts.empty()) {
    prompter.say("sacctmgr shows no association for you: jobs use the cluster's defaults");
  }
  return step;
}

Result<json> storage(const InitOptions& o, InitAnswers& a, proc::Runner& runner, Prompter& prompter,
                     std::string& cache_root)
{
  RV_TRY(probe, runner.run(scratch_probe_command()));
  const auto candidates = parse_scratch_candidates(probe.out);
  std::string scratch = !o.scratch.empty() ? o.scratch : a.scratch;
  if (scratch.empty()) {
    const std::string detected = candidates.empty() ? std::string("none") : candidates.front();
    if (o.interactive) {
      if (!candidates.empty()) {
        prompter.say(fmt::format("Scratch file systems found: {}", text::join(candidates, ", ")));
      }
      RV_TRY(answer, prompter.ask("Scratch directory for caches (HF, pip, uv, torch), or 'none' for the home quota",
                                  detected, "--scratch"));
      scratch = std::string(text::trim(answer));
    } else {
      scratch = detected;
    }
  }
  a.scratch = scratch.empty() ? "none" : scratch;
  if (a.scratch != "none" && std::ranges::find(candidates, a.scratch) == candidates.end()) {
    proc::Command check;
    check.argv = {"sh", "-c",
                  std::string(proc::remote::abs_path_function()) +
                      "d=$(rv_abs \"$1\") && [ -d \"$d\" ] && [ -w \"$d\" ]",
                  "rv-init", a.scratch};
    RV_TRY(checked, runner.run(check));
    if (!checked.ok()) {
      return fail(ErrorCode::usage,
                  fmt::format("scratch directory {} does not exist on the cluster or is not writable", a.scratch),
                  "create it, choose another with --scratch DIR, or pass --scratch none (caches under ~/.rv)");
    }
  }
  cache_root = a.scratch == "none" ? std::string() : cache_root_on(a.scratch);
  Settings settings;
  settings.remote_root = o.remote_root;
  settings.scratch_root = cache_root;
  RV_TRY(paths, prepare_remote(runner, settings, "", ""));
  proc::Command mkdirs;
  mkdirs.argv = {"mkdir", "-p"};
  for (const char* sub : {"huggingface", "pip", "uv", "torch"}) {
    mkdirs.argv.push_back(paths.cache + "/" + sub);
  }
  RV_TRY(made, runner.run(mkdirs));
  if (!made.ok()) {
    return fail(ErrorCode::io, fmt::format("cannot create the caches under {}: {}", paths.cache, text::trim(made.err)),
                "choose another --scratch");
  }
  if (!cache_root.empty()) {
    cache_root = paths.cache; // absolute, as the login node resolved it
  }
  return json{{"step", "storage"},         {"status", "done"},     {"remote_root", paths.root},
              {"cache_root", paths.cache}, {"scratch", a.scratch}, {"detected", candidates}};
}

} // namespace init_steps

proc::Command install_key_command(const std::string& public_line)
{
  proc::Command cmd;
  // The key arrives on stdin; a line holding the same type and base64 (after options, before a
  // comment) counts as present. A file without a final newline gets one before the new line.
  cmd.argv = {"sh", "-c",
              "umask 077; d=\"$HOME/.ssh\"; f=\"$d/authorized_keys\"; "
              "mkdir -p \"$d\" && chmod 700 \"$d\" && touch \"$f\" && chmod 600 \"$f\" || exit 1; "
              "IFS= read -r key || [ -n \"$key\" ] || exit 2; "
              "set -f; set -- $key; t=$1; b=$2; "
              "if awk -v t=\"$t\" -v b=\"$b\" '{ for (i = 1; i < NF; i++) if ($i == t && $(i + 1) == b) found = 1 } "
              "END { exit !found }' \"$f\"; then echo present; exit 0; fi; "
              "if [ -s \"$f\" ] && [ -n \"$(tail -c 1 \"$f\")\" ]; then echo >>\"$f\" || exit 1; fi; "
              "printf '%s\\n' \"$key\" >>\"$f\" && echo added",
              "rv-init"};
  cmd.stdin_data = public_line + "\n";
  cmd.timeout = std::chrono::seconds(30);
  return cmd;
}

proc::Command scratch_probe_command()
{
  proc::Command cmd;
  cmd.argv = {"sh", "-c",
              "u=$(id -un 2>/dev/null || echo \"$USER\"); "
              "for d in \"${SCRATCH:-}\" \"${SCRATCHDIR:-}\" \"/scratch/$u\" \"/scratch/users/$u\" \"/scratch1/$u\" "
              "\"/lustre/scratch/$u\" \"/gpfs/scratch/$u\"; do "
              "[ -n \"$d\" ] && [ -d \"$d\" ] && [ -w \"$d\" ] && printf '%s\\n' \"$d\"; done; exit 0",
              "rv-init"};
  cmd.timeout = std::chrono::seconds(30);
  return cmd;
}

std::vector<std::string> parse_scratch_candidates(std::string_view out)
{
  std::vector<std::string> dirs;
  for (auto line : text::lines(out)) {
    std::string d(text::trim(line));
    if (!d.empty() && d.front() == '/' && std::ranges::find(dirs, d) == dirs.end()) {
      dirs.push_back(std::move(d));
    }
  }
  return dirs;
}

std::string cache_root_on(const std::string& scratch)
{
  std::string root = scratch;
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  return root + "/.cache/rv";
}

} // namespace rv::app
