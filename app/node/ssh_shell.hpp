#pragma once
// `rv ssh`: a shell (or a command) on a running job's node, inside its allocation (a job step
// with `srun --overlap`), and the ssh_config block that lets an editor (VS Code Remote) reach
// the same node through the login node.

#include "app/env.hpp"
#include "app/node/job_target.hpp"

#include <string>
#include <vector>

namespace rv::app {

// The srun argv that joins `t`'s job on its node: `srun --jobid=J --overlap --nodes=1
// --ntasks=1 --nodelist=NODE` then `--pty bash -l` for a shell (empty `command`), else the
// command: one word is a shell command line (`bash -c`), several are an exact argv. In the job's
// directory (`t.workdir`, where its own command runs) when it has one: that program, quoted word
// by word, after `cd -- DIR || exit 1` in `bash -c` (a directory that is gone is exit 1, never
// the command run elsewhere).
std::vector<std::string> step_argv(const NodeTarget& t, const std::vector<std::string>& command);

// Runs the shell on this terminal (`interactive`) or the command with its output streamed to
// env.output; returns its exit status.
Result<int> open_on_node(Env& env, const NodeTarget& t, const std::vector<std::string>& command);

// How the login node is reached, for the ProxyJump line.
struct LoginHop {
  std::string given; // the destination as the user gave it (`rvtb`, `me@login:2222`); "" = local
  std::string user;  // as resolved
  std::string host;  // as resolved (HostName)
  int port = 22;
};

// "ProxyJump" value: the alias when the user named a Host alias of their ssh config, else
// `user@host[:port]` as resolved.
std::string proxy_jump(const LoginHop& login);

// Parses "ssh user@host:port" (Runner::where()) into a hop; `given` is kept as is.
LoginHop login_hop(const std::string& where, const std::string& given);

// The ssh_config block for `t`: `Host rv-<request>`, `HostName <node address>`, `User`,
// `ProxyJump` (none when `login.host` is empty: rv runs on the login node), framed by
// `# BEGIN rv` / `# END rv`. An error when the node's address or name, the user or the login host
// is not a plain host or user name (N13: nothing may inject a directive).
Result<std::string> ssh_config_block(const NodeTarget& t, const LoginHop& login);

// `existing` (an ssh config file's text) with its managed block replaced by `block`, or with
// `block` appended when it has none; every other byte is kept. A `# BEGIN rv` without its
// `# END rv` is an error (a hand-edited file rv will not guess about).
Result<std::string> with_managed_block(const std::string& existing, const std::string& block);

} // namespace rv::app
