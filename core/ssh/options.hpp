#pragma once
// A connection's identity: where an SSH session goes and with which settings. One struct for
// every user of the connection: rv's own libssh session (SshRunner), the held connection (its
// socket name hashes these fields), and rsync's `ssh` (sync/rsync.hpp). Filled from the settings
// in one place, ssh_options_from. Pure: no libssh, no I/O.

#include "core/result.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace rv {
class Config;
}

namespace rv::proc {

class SecondFactorPrompter;

struct SshOptions {
  std::string destination;   // [user@]host[:port] or an ssh config alias, as the user gave it; "" = this machine
  std::string ssh_config;    // OpenSSH client config to honour; "" = none
  std::string identity_file; // tried before the agent and the default keys
  std::string known_hosts;   // --known-hosts/RV_KNOWN_HOSTS: replaces the ssh config's UserKnownHostsFile
  // The config file's known_hosts (rv init writes it): used where the ssh config names no
  // UserKnownHostsFile for the host, and read beside it by OpenSSH's subprocesses, so that an
  // alias's own file still counts (third UX review N8). "" = none.
  std::string known_hosts_fallback;
  std::string ssh_dir; // libssh's `%d` (default keys, known_hosts); "" = the passwd entry's ~/.ssh
  std::chrono::seconds connect_timeout{15};
  // Answers a second factor's keyboard-interactive prompts; null = the user (terminal or
  // SSH_ASKPASS, user_prompter()).
  std::shared_ptr<SecondFactorPrompter> second_factor;
  // Hold the authenticated session in a background rv for this long after its last use, and
  // open every channel through it (docs/ssh.md, "One held connection"); 0 = a session per run.
  std::chrono::seconds persist{0};
  // How long to wait for another rv that is starting the same holder (it may sit at a second-factor
  // prompt in another terminal); then this one connects directly, saying why.
  std::chrono::seconds start_wait{120};
  std::string runtime_dir; // the holders' private directory; "" = $XDG_RUNTIME_DIR/rv, else the state dir's hold/
};

// The connection the settings name: `host` (else the `host` key), ssh_config, identity_file,
// known_hosts, connect_timeout and connection_persist, each `~/` below `home`. A known_hosts from
// the config file (rv init's) is a fallback that must not override an alias's own
// UserKnownHostsFile; from a flag or RV_KNOWN_HOSTS it replaces it (third UX review N8).
Result<SshOptions> ssh_options_from(const Config& config, const std::string& home, const std::string& host = {});

} // namespace rv::proc
