// `rv ssh [REQUEST] [-- CMD...]`: a shell (or CMD) on a running request's node, inside its
// allocation; `rv ssh --print-config [--install]`: the ssh_config block for editors.

#include "app/node/ssh_shell.hpp"
#include "cli/commands.hpp"
#include "core/printable.hpp"
#include "core/store/record_store.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace rv::cli {
using namespace rv::app;
namespace {

struct SshCmdOptions {
  std::string key;
  int node = 0;
  bool print_config = false; // --print-config (not --config: that is the global config file)
  bool install = false;
  std::string ssh_file; // --file: the ssh config --install edits (default ~/.ssh/config)
};

// `path` read whole ("" when it does not exist).
Result<std::string> read_text(const std::filesystem::path& path)
{
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return std::string();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(ErrorCode::io, fmt::format("cannot read {}", path.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<int> install_block(const std::string& block, const std::string& file, bool json)
{
  namespace fs = std::filesystem;
  fs::path path = file.empty() ? fs::path(local_home()) / ".ssh" / "config" : fs::path(expand_home(file));
  std::error_code ec;
  if (fs::is_symlink(path, ec)) {
    path = fs::canonical(path, ec); // a dotfile manager's link stays a link: write where it points
  }
  // One rv at a time edits it (the lock lives in rv's private state dir, never beside a --file in
  // a shared directory); the write goes through a random O_EXCL|O_NOFOLLOW temp file (N13).
  std::filesystem::create_directories(request_store().dir().parent_path(), ec);
  RV_TRY(lock, store::FileLock::acquire(request_store().dir().parent_path() / "ssh-config.lock"));
  RV_TRY(old, read_text(path));
  RV_TRY(updated, with_managed_block(old, block));
  fs::create_directories(path.parent_path(), ec);
  RV_TRY_VOID(store::write_file_atomic(path, updated));
  if (json) {
    print_json({{"installed", path.string()}, {"block", block}});
  } else {
    std::fputs(printable(fmt::format("{}wrote the block above into {}\n", block, path.string())).c_str(), stdout);
  }
  return 0;
}

Result<int> run_ssh(const SshCmdOptions& opts, Context& ctx)
{
  if (opts.install && !opts.print_config) {
    return fail(ErrorCode::usage, "--install goes with --print-config", "rv ssh --print-config --install [REQUEST]");
  }
  if (opts.print_config && !ctx.trailing.empty()) {
    return fail(ErrorCode::usage, "rv ssh --print-config takes no command");
  }
  const bool shell = !opts.print_config && ctx.trailing.empty();
  if (shell && (!::isatty(0) || ctx.global.json)) {
    return fail(ErrorCode::usage, "rv ssh opens a shell only on a terminal",
                "give a command: rv ssh [REQUEST] -- CMD...");
  }
  std::string key = opts.key;
  RV_TRY(real, ctx.make_env_for_request(key)); // the request's own cluster
  RV_TRY(target, running_target(real->env, key, opts.node));
  if (opts.print_config) {
    RV_TRY(block, ssh_config_block(target, login_hop(real->env.cluster.where(), ctx.config.get("host"))));
    if (opts.install) {
      return install_block(block, opts.ssh_file, ctx.global.json);
    }
    if (ctx.global.json) {
      print_json({{"host", "rv-" + target.request_id},
                  {"node", target.node},
                  {"address", target.address},
                  {"job_id", target.job_id},
                  {"block", block}});
    } else {
      std::fputs(printable(block).c_str(), stdout);
    }
    return 0;
  }
  if (ctx.global.json) {
    // The command's output is the result; one document at the end says how it went.
    proc::Command c;
    c.argv = step_argv(target, ctx.trailing);
    c.timeout = std::chrono::milliseconds(0);
    RV_TRY(o, real->env.cluster.run(c));
    print_json({{"request", target.request_id},
                {"job_id", target.job_id},
                {"node", target.node},
                {"exit_code", o.status()},
                {"stdout", o.out},
                {"stderr", o.err}});
    return o.status();
  }
  return open_on_node(real->env, target, ctx.trailing);
}

} // namespace

void setup_ssh(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<SshCmdOptions>();
  auto* ssh = app.add_subcommand("ssh", "a shell (or -- CMD) on a running request's node, inside its allocation");
  ssh->add_option("request", opts->key, "request id (or prefix), job id, or job name; default the newest running");
  ssh->add_option("--node", opts->node, "node K of a multi-node job (0 = the first)")
      ->type_name("K")
      ->check(CLI::NonNegativeNumber);
  ssh->add_flag("--print-config", opts->print_config,
                "print an ssh_config block (ProxyJump through the login node) instead");
  ssh->add_flag("--install", opts->install, "with --print-config: write it into a managed block of ~/.ssh/config");
  ssh->add_option("--file", opts->ssh_file, "with --install: the ssh config file to edit (default ~/.ssh/config)")
      ->type_name("FILE");
  ssh->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_ssh(*opts, ctx); }; });
}

} // namespace rv::cli
