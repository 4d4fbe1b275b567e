// rv's command line: the global options and every command, in one place for main.cpp and the
// tests that parse real command lines.

#include "cli/commands.hpp"
#include "cli/help.hpp"

namespace rv::cli {

void define_app(CLI::App& app, Context& ctx)
{
  app.description("rv: get a GPU job running on a Slurm cluster as soon as the cluster can start it");
  // A callback: the Kerberos line of the static binary loads a library, only when asked.
  app.set_version_flag("-V,--version", [] {
    auto text = version_long_text();
    text.pop_back(); // CLI11 ends the line
    return text;
  });
  app.require_subcommand(1);
  app.fallthrough();

  auto& g = ctx.global;
  app.add_option("-H,--host", g.hosts,
                 "login node: [user@]host[:port] or an ~/.ssh/config alias (env RV_HOST); repeat to race rv run, "
                 "up and cost across clusters")
      ->type_name("HOST")
      ->allow_extra_args(false);
  app.add_option("--config", g.config_file, "config file (default $XDG_CONFIG_HOME/rv/config.json; env RV_CONFIG)")
      ->type_name("FILE");
  app.add_option("-i,--identity", g.identity_file, "SSH private key to use")->type_name("FILE");
  app.add_option("--known-hosts", g.known_hosts, "known_hosts file to verify the host key against")->type_name("FILE");
  app.add_option("--ssh-config", g.ssh_config, "OpenSSH client config to honour (default ~/.ssh/config)")
      ->type_name("FILE");
  app.add_option("--connect-timeout", g.connect_timeout, "SSH connect timeout, e.g. 15s")->type_name("DURATION");
  app.add_option("-A,--account", g.account, "Slurm account")->type_name("NAME");
  app.add_flag("-v,--verbose", g.verbosity, "more logging on stderr (-vv for trace)");
  app.add_flag("-q,--quiet", g.quiet, "nothing but results, the job's output, warnings and errors");
  app.add_flag("--json", g.json, "print results (and errors) as JSON on stdout");

  setup_exec(app, ctx);
  setup_up(app, ctx);
  setup_run(app, ctx);
  setup_cost(app, ctx);
  setup_ps(app, ctx);
  setup_why(app, ctx);
  setup_stats(app, ctx);
  setup_stop(app, ctx);
  setup_logs(app, ctx);
  setup_gpu(app, ctx);
  setup_sync(app, ctx);
  setup_config(app, ctx);
  setup_env(app, ctx);
  setup_doctor(app, ctx);
  setup_ssh(app, ctx);
  setup_forward(app, ctx);
  setup_status(app, ctx);
  setup_completion(app, ctx);
  setup_init(app, ctx);
  setup_connect(app, ctx);
  setup_settle(app, ctx);
  setup_help(app, ctx);
  use_rv_help(app); // grouped, wrapped, with examples and the global options
}

} // namespace rv::cli
