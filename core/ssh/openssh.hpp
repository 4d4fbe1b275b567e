#pragma once
// What OpenSSH's client resolves for a host and libssh 0.10 does not (docs/ssh.md, "Compared with
// OpenSSH"): libssh's config parser skips CertificateFile and IdentitiesOnly, keeps its list of
// IdentityFiles to itself, and turns ProxyJump into a ProxyCommand that takes two hops in the
// wrong order and reads the hops from ~/.ssh/config instead of the file rv was given. rv asks
// `ssh -G` (OpenSSH's own reading of the config, no connection) for these, and builds the jump the
// way OpenSSH does. Pure: parsing and command lines only.

#include "core/result.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace rv::proc {

struct OpenSshView {
  std::vector<std::string> identity_files;    // in order, `~/` expanded
  std::vector<std::string> certificate_files; // likewise
  bool identities_only = false;
  bool gssapi = false;     // GSSAPIAuthentication yes: Kerberos first (core/ssh/session_auth.cpp)
  bool batch_mode = false; // BatchMode yes: no passphrase is asked (core/ssh/session_auth.cpp)
  std::string proxy_jump;  // "" = none
};

// Reads `ssh -G HOST`'s output (`keyword value` lines); `home` replaces a leading `~/`.
OpenSshView parse_openssh_view(std::string_view output, std::string_view home);

// Whether `ssh -G` can tell rv more than libssh for this config text: it names ProxyJump,
// CertificateFile, IdentitiesOnly, GSSAPIAuthentication, BatchMode or IdentityFile (whose `-cert.pub` may lie beside
// it; libssh lists only the first), or Includes or Matches what might (case-insensitive, comments too: a
// false yes costs one `ssh -G`, ~10 ms). Certificates beside the default keys need no config.
bool config_needs_openssh(std::string_view config_text);

// OpenSSH's `-o` words for rv's known_hosts files: `known_hosts` (--known-hosts) replaces the ssh
// config's UserKnownHostsFile; `fallback` (rv's config file's, which rv init writes) is read beside
// whatever the ssh config names, as one more global file after OpenSSH's own two, so that an alias's
// UserKnownHostsFile still counts (third UX review N8). Empty when neither is given.
std::vector<std::string> known_hosts_ssh_options(const std::string& known_hosts, const std::string& fallback);

// What the jump's ssh needs besides the hops.
struct JumpSpec {
  std::string jump;        // ProxyJump's value: `[user@]host[:port]` (or ssh://...), comma-separated
  std::string config;      // the config file rv reads ("" = OpenSSH's default)
  std::string known_hosts; // rv's --known-hosts ("" = the config's)
  std::string log_file;    // ssh -E: where the jump's errors go (libssh sends its stderr to /dev/null)
  std::string host;        // the login node as the bastion reaches it (HostName)
  unsigned port = 22;
  std::chrono::seconds connect_timeout{15};
  std::string known_hosts_fallback; // rv's config file's known_hosts, read beside the config's
};

// The argv of the jump's `ssh -W`, as OpenSSH builds it: the LAST hop is reached directly by this
// ssh, the earlier ones through `-J`, with the same config file. Fails on a hop that is not
// `[user@]host[:port]`.
Result<std::vector<std::string>> proxy_jump_argv(const JumpSpec& spec);

// `argv` as a libssh ProxyCommand: libssh runs it with `$SHELL -c` (the user's shell, fish or tcsh
// too) after expanding `%` escapes, so it is the login-shell-proof line of shell.hpp with every
// `%` doubled.
std::string proxy_command_line(const std::vector<std::string>& argv);

} // namespace rv::proc
