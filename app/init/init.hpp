#pragma once
// `rv init`: a guided first run that leaves a working setup (docs/init.md). Each step checks the
// real state first (the host key already known, the key already accepted), so running it again
// changes nothing, and the answers are remembered between runs (a run cut off part-way resumes
// with them as defaults). A password is asked for, used once, and never stored or logged.

#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "core/ssh/init.hpp"
#include "core/ssh/keys.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::app {

// What init learned; saved after every step (never a password).
struct InitAnswers {
  std::string host; // as typed: a name, an address or an ~/.ssh/config alias
  std::string user; // "" = the ssh config's, else the local user's
  int port = 0;     // 0 = the ssh config's, else 22
  std::string identity;
  std::string host_key; // the fingerprint the user accepted
  std::string account;
  std::string scratch;       // the scratch directory chosen; "none" = caches under remote_root
  std::string generated_key; // the key rv init generated (named for the host in the ssh config)
};
nlohmann::json to_json(const InitAnswers& answers);
InitAnswers init_answers_from_json(const nlohmann::json& j);

// The flags of `rv init` (cli/cmd_init.cpp); an empty value was not given.
struct InitOptions {
  std::string host, user;
  int port = 0;
  std::string identity;             // -i: use (or generate) this key
  std::string ssh_config;           // honoured for the host (UserKnownHostsFile, User, Port...)
  bool ssh_config_given = false;    // --ssh-config or RV_SSH_CONFIG: written to the config too
  std::string known_hosts;          // --known-hosts; "" = the ssh config's, else <ssh_dir>/known_hosts
  std::string known_hosts_fallback; // the config file's (an earlier init's): proc::SshOptions
  std::string ssh_dir;              // ~/.ssh of $HOME
  std::chrono::seconds connect_timeout{15};
  std::chrono::seconds persist{0}; // connection_persist: the verify step's session is held this long
  bool interactive = true;
  bool accept_host_key = false;     // --yes
  std::string host_key_fingerprint; // --host-key-fingerprint SHA256:...: accept only this key
  std::string account;
  std::string scratch; // a directory, or "none"
  std::string remote_root = "~/.rv";
  std::string key_comment; // on a generated key's public line
};

// How init asks. The terminal in interactive mode; with --non-interactive every question that the
// flags did not answer is a usage error naming the flag.
class Prompter {
public:
  virtual ~Prompter() = default;
  // An answer, or `default_answer` when the user just presses Enter. `flag` names the option
  // that answers it in --non-interactive mode.
  virtual Result<std::string> ask(std::string_view question, const std::string& default_answer,
                                  std::string_view flag) = 0;
  virtual Result<bool> confirm(std::string_view question, bool default_yes, std::string_view flag) = 0;
  // A password, not echoed; `attempt` counts from 1.
  virtual Result<std::string> password(std::string_view prompt, int attempt) = 0;
  // A secret line, not echoed; "" when the user just presses Enter (a new key's passphrase).
  virtual Result<std::string> secret(std::string_view prompt) = 0;
  // A line of progress (stderr; nothing with --json).
  virtual void say(std::string_view line) = 0;
};

// The effects init needs (cli builds the real ones; app/ constructs none).
class InitWorld {
public:
  virtual ~InitWorld() = default;
  virtual std::unique_ptr<proc::SshBootstrap> bootstrap(const proc::SshOptions& options) = 0;
  virtual std::unique_ptr<proc::Runner> runner(const proc::SshOptions& options) = 0;
  // A runner on the bootstrap's own authenticated session (SshBootstrap::into_runner).
  virtual std::unique_ptr<proc::Runner> runner_from(std::unique_ptr<proc::SshBootstrap> session,
                                                    const proc::SshOptions& later) = 0;
  virtual std::optional<std::string> find_key(const std::string& ssh_dir) = 0;
  virtual bool exists(const std::string& local_path) = 0;
  virtual Result<proc::KeyPair> read_key(const std::string& path) = 0;
  // `passphrase` "" = none.
  virtual Result<proc::KeyPair> generate_key(const std::string& path, const std::string& comment,
                                             const std::string& passphrase) = 0;
  // A local text file (the ssh config), nullopt when it cannot be read.
  virtual std::optional<std::string> read_text(const std::string& path) = 0;
  // Appends `text` to a local file, created 0600 (its directory 0700) when missing.
  virtual Result<void> append_text(const std::string& path, const std::string& text) = 0;
  // Remembers the answers so far (init's state file).
  virtual Result<void> remember(const InitAnswers& answers) = 0;
  // Writes one key of the config file (rv config set).
  virtual Result<void> set_config(const std::string& key, const std::string& value) = 0;
};

// What each step did: `{"step", "status": done|unchanged|skipped, ...details}`, in order.
struct InitReport {
  std::vector<nlohmann::json> steps;
  std::vector<std::pair<std::string, std::string>> config; // the keys written, in order
};

// Runs every step with `remembered` answers as defaults. Fails at the first step that cannot be
// done, with that step's error (unreachable 255, a changed host key 252, a refused login 254...).
Result<InitReport> run_init(const InitOptions& options, InitAnswers remembered, Prompter& prompter, InitWorld& world);

// The key step (tests/unit/app/init/test_init.cpp): -i (used; when it names no file, generated there
// once the user confirms: a typo must not install a new key), else a default key (or rv's own from
// an earlier run), else a new ed25519 key at ~/.ssh/id_ed25519_rv (or the next free name: never a
// path where a key or a .pub is), offered a passphrase (asked twice; Enter: none, with a warning).
// Fills `pair`.
Result<nlohmann::json> key_step(const InitOptions& o, InitAnswers& a, InitWorld& world, Prompter& prompter,
                                proc::KeyPair& pair);

// The key rv generates when the user has none: `<ssh_dir>/id_ed25519_rv`, else `id_ed25519_rv2`,
// `_rv3`... the first where neither the key nor its `.pub` exists (`exists` answers for a path).
std::string free_key_path(const std::string& ssh_dir, const std::function<bool(const std::string&)>& exists);

// What to append to the ssh config `config_text` so that OpenSSH (`ssh HOST`) and rv find `key` for
// `host`: a `Host HOST` block with `IdentityFile KEY`; "" when a `Host` line naming `host` exactly
// already has that IdentityFile (rv init run again).
std::string identity_config_block(std::string_view config_text, const std::string& host, const std::string& key);

// --- the remote commands, pure (tests/unit/app/init/test_init.cpp) ---

// Appends `public_line` (sent on stdin) to ~/.ssh/authorized_keys unless a line already holds
// the same key (type and base64, whatever the options or comment); ~/.ssh 0700, the file 0600.
// Prints `added` or `present`.
proc::Command install_key_command(const std::string& public_line);

// Prints the scratch directories that exist and are writable: $SCRATCH, $SCRATCHDIR, then
// /scratch/$USER and the usual variants, one per line.
proc::Command scratch_probe_command();
std::vector<std::string> parse_scratch_candidates(std::string_view out);

// Where the caches go on a scratch directory.
std::string cache_root_on(const std::string& scratch);

} // namespace rv::app
