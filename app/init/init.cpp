#include "app/init/init.hpp"
#include "app/init/init_steps.hpp"

#include "core/secure_memory.hpp"
#include "core/ssh/destination.hpp"
#include "core/ssh/failures.hpp"
#include "core/store/json_fields.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

namespace rv::app {
namespace {

using nlohmann::json;

constexpr int k_password_tries = 3;
constexpr int k_host_tries = 3; // interactive: a host that cannot be reached is asked again
constexpr int k_passphrase_tries = 3;
constexpr const char* k_rv_key = "id_ed25519_rv"; // rv's own key, beside the user's (N10)

// `[user@]host[:port]` (IPv6 addresses in brackets when a port follows).
std::string destination_of(const InitAnswers& a)
{
  std::string host = a.host;
  if (a.port != 0 && host.find(':') != std::string::npos) {
    host = "[" + host + "]";
  }
  return fmt::format("{}{}{}", a.user.empty() ? "" : a.user + "@", host, a.port != 0 ? fmt::format(":{}", a.port) : "");
}

proc::SshOptions ssh_options(const InitOptions& o, const InitAnswers& a)
{
  proc::SshOptions s;
  s.destination = destination_of(a);
  s.ssh_config = o.ssh_config;
  s.identity_file = a.identity;
  s.known_hosts = o.known_hosts;
  s.known_hosts_fallback = o.known_hosts_fallback;
  s.ssh_dir = o.ssh_dir;
  s.connect_timeout = o.connect_timeout;
  return s;
}

// The options every later command computes from the config init writes (cli's
// Context::ssh_options: no ssh_dir, the config file's known_hosts as a fallback), with
// connection_persist: the session init goes on with is held under the name they look for, so the
// first commands after init ask no second factor again (third UX review N2).
proc::SshOptions later_options(const InitOptions& o, const InitAnswers& a, const std::string& known_hosts_pin)
{
  proc::SshOptions s;
  s.destination = destination_of(a);
  s.ssh_config = o.ssh_config;
  s.identity_file = a.identity;
  s.known_hosts_fallback = known_hosts_pin.empty() ? o.known_hosts_fallback : known_hosts_pin;
  s.connect_timeout = o.connect_timeout;
  s.persist = o.persist;
  return s;
}

// The host, user and port: flags, else what was remembered, else asked.
Result<json> host_step(const InitOptions& o, InitAnswers& a, Prompter& prompter)
{
  const std::string before = a.host;
  if (!o.host.empty()) {
    a.host = o.host;
  } else {
    RV_TRY(host, prompter.ask("Login node (host name, address or ~/.ssh/config alias)", a.host, "--host"));
    a.host = std::string(text::trim(host));
  }
  // `user@host:port` typed as the host is split, so that each part is remembered on its own.
  if (auto dest = proc::parse_destination(a.host); !dest) {
    return std::unexpected(dest.error());
  } else {
    if (dest->host != before) { // what was remembered belonged to another cluster
      InitAnswers fresh;
      fresh.identity = a.identity;
      fresh.generated_key = a.generated_key;
      a = fresh;
    }
    a.host = dest->host;
    if (!dest->user.empty()) {
      a.user = dest->user;
    }
    if (dest->port != 0) {
      a.port = dest->port;
    }
  }
  if (!o.user.empty()) {
    a.user = o.user;
  } else if (o.interactive && o.host.empty()) {
    RV_TRY(user,
           prompter.ask("User name on the cluster (Enter: from ~/.ssh/config or your local name)", a.user, "--user"));
    a.user = std::string(text::trim(user));
  }
  if (o.port != 0) {
    a.port = o.port;
  } else if (o.interactive && o.host.empty()) {
    RV_TRY(port, prompter.ask("SSH port (Enter: from ~/.ssh/config, else 22)",
                              a.port != 0 ? std::to_string(a.port) : std::string(), "--port"));
    const auto typed = std::string(text::trim(port));
    if (!typed.empty()) {
      int n = 0;
      auto [end, ec] = std::from_chars(typed.data(), typed.data() + typed.size(), n);
      if (ec != std::errc{} || end != typed.data() + typed.size() || n < 1 || n > 65535) {
        return fail(ErrorCode::usage, fmt::format("'{}' is not a port (1-65535)", typed), "run rv init again");
      }
      a.port = n;
    }
  }
  return json{{"step", "host"}, {"status", "done"}, {"destination", destination_of(a)}};
}

// Reachability and the host key: shown as OpenSSH shows it, accepted once, then written.
Result<json> host_key_step(const InitOptions& o, InitAnswers& a, proc::SshBootstrap& ssh, Prompter& prompter)
{
  auto opened = ssh.open();
  if (!opened) {
    prompter.say(fmt::format("cannot reach {}", destination_of(a)));
    return std::unexpected(opened.error());
  }
  const auto& key = *opened;
  json step{{"step", "host_key"},
            {"fingerprint", key.fingerprint},
            {"type", key.type},
            {"known_hosts", key.known_hosts_file}};
  prompter.say(fmt::format("reached {}", ssh.label()));
  if (!o.host_key_fingerprint.empty() && o.host_key_fingerprint != key.fingerprint) {
    return fail(ErrorCode::host_key_changed,
                fmt::format("ssh {}: the host offered {} {}, not the pinned {}", ssh.label(), key.type, key.fingerprint,
                            o.host_key_fingerprint),
                "check the fingerprint with the cluster's documentation or admins");
  }
  if (key.state == proc::KnownHost::ok) {
    a.host_key = key.fingerprint;
    step["status"] = "unchanged";
    return step;
  }
  if (key.state == proc::KnownHost::changed || key.state == proc::KnownHost::other_type) {
    return std::unexpected(proc::host_key_verdict(key.state, ssh.label(), key.fingerprint, "").error());
  }
  if (o.host_key_fingerprint.empty() && !o.accept_host_key) { // a pin has matched above
    prompter.say(fmt::format("The host's {} key fingerprint is {}.", key.type, key.fingerprint));
    prompter.say("Compare it with the one your cluster publishes (its documentation or admins).");
    RV_TRY(yes, prompter.confirm("Is this the right key? Trust it and add it to " + key.known_hosts_file, false,
                                 "--yes or --host-key-fingerprint"));
    if (!yes) {
      return fail(ErrorCode::host_key_unknown, fmt::format("ssh {}: host key not accepted", ssh.label()),
                  "run rv init again once you have checked the fingerprint");
    }
  }
  RV_TRY_VOID(ssh.trust_host_key());
  a.host_key = key.fingerprint;
  step["status"] = "done";
  return step;
}

// A key of the user's was accepted and the second factor then failed: init stops there, with
// nothing generated or installed (N1: a mistyped code once made a new key and asked a password).
Error second_factor_refused(Error e)
{
  e.hint = "the host accepted your key; only the second factor failed: run rv init again with a fresh code "
           "(nothing was generated or installed)";
  return e;
}

// Logs in (with the user's keys, else a password: 3 tries), then makes sure the key rv will use
// is in authorized_keys: a login with another key of the user's proves nothing of this one.
Result<json> install_step(proc::SshBootstrap& ssh, const proc::KeyPair& pair, Prompter& prompter)
{
  json step{{"step", "install_key"}};
  Result<void> login = ssh.login_with_keys(pair.private_path);
  if (!login && ssh.key_accepted()) {
    return std::unexpected(second_factor_refused(login.error()));
  }
  for (int attempt = 1; !login && attempt <= k_password_tries; ++attempt) {
    RV_TRY(password, prompter.password(fmt::format("Password for {}", ssh.label()), attempt));
    login = ssh.login_with_password(password);
    std::fill(password.begin(), password.end(), '\0');
    if (login) {
      break;
    }
    prompter.say(login.error().message);
    if (login.error().message.find("neither password") != std::string::npos) {
      break; // no password will do
    }
  }
  if (!login) {
    return std::unexpected(login.error());
  }
  RV_TRY(out, ssh.run(install_key_command(pair.public_line)));
  if (!out.ok()) {
    return fail(ErrorCode::io,
                fmt::format("cannot add the key to ~/.ssh/authorized_keys on {}: {}", ssh.label(), text::trim(out.err)),
                "check that your home directory on the cluster is writable");
  }
  const bool added = text::trim(out.out) == "added";
  step["status"] = added ? "done" : "unchanged";
  step["detail"] = added ? "added to ~/.ssh/authorized_keys" : "already in ~/.ssh/authorized_keys";
  return step;
}

// A new key's passphrase: asked twice (3 tries when they differ); "" = none, after a warning.
Result<std::string> new_key_passphrase(const std::string& path, Prompter& prompter)
{
  prompter.say("A key without a passphrase can be used by anyone who gets a copy of the file.");
  for (int attempt = 1; attempt <= k_passphrase_tries; ++attempt) {
    RV_TRY(first, prompter.secret(fmt::format("Passphrase for the new key {} (Enter: none)", path)));
    if (first.empty()) {
      return first;
    }
    auto second = prompter.secret("Same passphrase again");
    const bool same = second && *second == first;
    if (second) {
      wipe(*second);
    }
    if (same) {
      return first;
    }
    wipe(first);
    if (!second) {
      return std::unexpected(second.error());
    }
    prompter.say("the two passphrases differ; type it again");
  }
  return fail(ErrorCode::usage, fmt::format("the passphrases typed for {} differed {} times", path, k_passphrase_tries),
              "run rv init again (nothing was generated)");
}

// rv's own key named for the host in the ssh config, so that `ssh HOST` finds it as rv does.
Result<json> ssh_config_step(const InitOptions& o, const InitAnswers& a, InitWorld& world)
{
  json step{{"step", "ssh_config"}, {"file", o.ssh_config}};
  if (o.ssh_config.empty()) {
    step["status"] = "skipped";
    step["detail"] = fmt::format("no ssh config (--ssh-config ''): OpenSSH needs -i {}", a.identity);
    return step;
  }
  const auto block = identity_config_block(world.read_text(o.ssh_config).value_or(""), a.host, a.identity);
  if (block.empty()) {
    step["status"] = "unchanged";
    step["detail"] = fmt::format("{} names IdentityFile {} for {}", o.ssh_config, a.identity, a.host);
    return step;
  }
  RV_TRY_VOID(world.append_text(o.ssh_config, block));
  step["status"] = "done";
  step["detail"] = fmt::format("added Host {} / IdentityFile {} to {}", a.host, a.identity, o.ssh_config);
  return step;
}

} // namespace

std::string free_key_path(const std::string& ssh_dir, const std::function<bool(const std::string&)>& exists)
{
  for (int n = 1;; ++n) {
    auto path = fmt::format("{}/{}{}", ssh_dir, k_rv_key, n == 1 ? std::string() : std::to_string(n));
    if (!exists(path) && !exists(path + ".pub")) {
      return path;
    }
  }
}

std::string identity_config_block(std::string_view config_text, const std::string& host, const std::string& key)
{
  const auto unquote = [](std::string_view w) {
    return w.size() >= 2 && w.front() == '"' && w.back() == '"' ? w.substr(1, w.size() - 2) : w;
  };
  bool in_host = false;
  for (auto line : text::lines(config_text)) {
    line = text::trim(line);
    if (line.empty() || line.starts_with('#')) {
      continue;
    }
    // `Keyword value` or `Keyword=value`, the keyword in any case.
    const auto cut = line.find_first_of(" \t=");
    const auto keyword = text::lower(line.substr(0, cut));
    auto value = cut == std::string_view::npos ? std::string_view() : text::trim(line.substr(cut + 1));
    if (value.starts_with('=')) {
      value = text::trim(value.substr(1));
    }
    if (keyword == "host") {
      const auto patterns = text::split_ws(value);
      in_host = std::ranges::any_of(patterns, [&](std::string_view p) { return unquote(p) == host; });
    } else if (keyword == "match") {
      in_host = false;
    } else if (keyword == "identityfile" && in_host && unquote(value) == key) {
      return {};
    }
  }
  const auto quoted = key.find_first_of(" \t") == std::string::npos ? key : "\"" + key + "\"";
  // A blank line before it (a last line without newline ended first).
  const char* before = config_text.empty() ? "" : config_text.ends_with('\n') ? "\n" : "\n\n";
  return fmt::format("{}# rv init: the key it generated for {} (docs/init.md)\nHost {}\n  IdentityFile {}\n", before,
                     host, host, quoted);
}

// The key: -i (used, or generated there), else a default key, else a new ed25519 key.
Result<json> key_step(const InitOptions& o, InitAnswers& a, InitWorld& world, Prompter& prompter, proc::KeyPair& pair)
{
  std::string path = !o.identity.empty() ? o.identity : a.identity;
  std::optional<std::string> existing;
  if (!path.empty()) {
    if (world.exists(path)) {
      existing = path;
    } else if (!o.identity.empty() && o.interactive) {
      // -i naming no file: a typo would otherwise become a new key installed on the cluster (N10).
      RV_TRY(yes, prompter.confirm(fmt::format("There is no key at {}. Generate a new ed25519 key there?", path), false,
                                   "-i"));
      if (!yes) {
        return fail(ErrorCode::usage, fmt::format("no key at {}", path),
                    "check the -i path, or leave -i out to use (or generate) your default key");
      }
    }
  } else {
    existing = world.find_key(o.ssh_dir);
    if (const auto own = fmt::format("{}/{}", o.ssh_dir, k_rv_key); !existing && world.exists(own)) {
      existing = own; // an earlier run's key (its init.json gone)
    }
    // Never the default names: a new key there would become every host's key (N10).
    path = existing.value_or(free_key_path(o.ssh_dir, [&](const std::string& p) { return world.exists(p); }));
  }
  bool protected_key = false;
  if (existing) {
    RV_TRY(found, world.read_key(*existing));
    pair = found;
  } else {
    std::string passphrase;
    if (o.interactive) {
      RV_TRY(typed, new_key_passphrase(path, prompter));
      passphrase = std::move(typed);
    } else {
      prompter.say(fmt::format("the new key {} has no passphrase (--non-interactive): anyone who gets a copy of the "
                               "file can use it; to protect one, make it with `ssh-keygen -t ed25519 -f KEY` and "
                               "pass -i KEY",
                               path));
    }
    protected_key = !passphrase.empty();
    auto made = world.generate_key(path, o.key_comment, passphrase);
    wipe(passphrase);
    if (!made) {
      return std::unexpected(made.error());
    }
    pair = *made;
    a.generated_key = pair.private_path;
    prompter.say(fmt::format("generated an ed25519 key{}: {} ({})", protected_key ? " with a passphrase" : "", path,
                             pair.fingerprint));
  }
  a.identity = pair.private_path;
  json step{{"step", "key"},
            {"status", pair.generated ? "done" : "unchanged"},
            {"path", pair.private_path},
            {"type", pair.type},
            {"fingerprint", pair.fingerprint},
            {"generated", pair.generated}};
  if (pair.generated) {
    step["passphrase"] = protected_key;
  }
  return step;
}

json to_json(const InitAnswers& a)
{
  return json{
      {"host", a.host},         {"user", a.user},       {"port", a.port},       {"identity", a.identity},
      {"host_key", a.host_key}, {"account", a.account}, {"scratch", a.scratch}, {"generated_key", a.generated_key}};
}

InitAnswers init_answers_from_json(const json& j)
{
  InitAnswers a;
  if (!j.is_object()) {
    return a;
  }
  // Read by type: a hand-edited or damaged init.json ("port": "22") only loses that answer (N10).
  using store::text_field;
  a.host = text_field(j, "host");
  a.user = text_field(j, "user");
  const double port = store::number_field(j, "port", 0);
  a.port = port >= 1 && port <= 65535 ? static_cast<int>(port) : 0;
  a.identity = text_field(j, "identity");
  a.host_key = text_field(j, "host_key");
  a.account = text_field(j, "account");
  a.scratch = text_field(j, "scratch");
  a.generated_key = text_field(j, "generated_key");
  return a;
}

Result<InitReport> run_init(const InitOptions& o, InitAnswers a, Prompter& prompter, InitWorld& world)
{
  InitReport report;
  auto record = [&](json step) -> Result<void> {
    spdlog::debug("init: {}", step.dump());
    report.steps.push_back(std::move(step));
    return world.remember(a);
  };
  // The host, asked again after one that cannot be reached (interactive, no --host).
  std::unique_ptr<proc::SshBootstrap> ssh;
  std::string known_hosts;
  for (int attempt = 1;; ++attempt) {
    RV_TRY(host, host_step(o, a, prompter));
    RV_TRY_VOID(record(std::move(host)));
    ssh = world.bootstrap(ssh_options(o, a));
    auto host_key = host_key_step(o, a, *ssh, prompter);
    if (host_key) {
      // Written to the config, so that later commands check the same file whatever libssh's default.
      known_hosts = host_key->value("known_hosts", "");
      RV_TRY_VOID(record(std::move(*host_key)));
      break;
    }
    if (!o.interactive || !o.host.empty() || host_key.error().code != ErrorCode::unreachable ||
        attempt == k_host_tries) {
      return std::unexpected(host_key.error());
    }
    prompter.say(host_key.error().message);
    if (!host_key.error().hint.empty()) {
      prompter.say(host_key.error().hint);
    }
    prompter.say("try again: another name, or host:port");
    report.steps.pop_back(); // that host's step
    a.host.clear();
  }

  // A key the host already accepts (ssh-agent, the ssh config's IdentityFile, a default key)
  // is the one to use: nothing is generated or installed, and the config names no key, so that
  // rv finds it as OpenSSH does (#24 item 8).
  Result<void> own_key = fail(ErrorCode::auth_failed, "no key tried");
  bool asks_passphrase = false; // the key was just generated with one: verify asks it
  if (o.identity.empty() && a.identity.empty()) {
    own_key = ssh->login_with_keys("");
    if (!own_key && ssh->key_accepted()) {
      return std::unexpected(second_factor_refused(own_key.error()));
    }
  }
  if (own_key) {
    RV_TRY_VOID(
        record(json{{"step", "key"},
                    {"status", "unchanged"},
                    {"detail", "the host accepts a key of yours (ssh-agent or the ssh config's IdentityFile)"}}));
    RV_TRY_VOID(record(json{{"step", "install_key"}, {"status", "unchanged"}, {"detail", "nothing to install"}}));
  } else {
    proc::KeyPair pair;
    RV_TRY(key, key_step(o, a, world, prompter, pair));
    asks_passphrase = key.value("passphrase", false);
    RV_TRY_VOID(record(std::move(key)));
    RV_TRY(install, install_step(*ssh, pair, prompter));
    RV_TRY_VOID(record(std::move(install)));
  }
  const std::string remote_user = ssh->user();
  std::unique_ptr<proc::Runner> runner;
  if (own_key) {
    // That session logged in with the user's own key (and second factor): init goes on in it, and
    // it is handed to the held connection, so the whole of init asks one code (N2).
    runner = world.runner_from(std::move(ssh), later_options(o, a, known_hosts));
  } else {
    ssh.reset(); // the password session ends here: everything after it uses the key alone
    runner = world.runner(later_options(o, a, known_hosts));
  }
  if (asks_passphrase) {
    prompter.say("checking the new key: type its passphrase once more");
  }
  proc::Command check;
  check.argv = {"true"};
  check.timeout = std::chrono::seconds(30);
  auto verified = runner->run(check);
  if (!verified || !verified->ok()) {
    return fail(ErrorCode::auth_failed,
                fmt::format("the key {} was installed, but logging in with it failed: {}",
                            a.identity.empty() ? std::string("of yours") : a.identity,
                            verified ? verified->err : verified.error().message),
                "sshd refuses keys when the cluster home, ~/.ssh or authorized_keys are writable by others "
                "(StrictModes): chmod go-w ~ ~/.ssh there");
  }
  RV_TRY_VOID(record(json{{"step", "verify"}, {"status", "done"}, {"detail", "key login works"}}));
  if (!a.generated_key.empty() && a.generated_key == a.identity) {
    RV_TRY(named, ssh_config_step(o, a, world));
    RV_TRY_VOID(record(std::move(named)));
  }

  RV_TRY(slurm, init_steps::slurm(o, a, *runner, remote_user.empty() ? runner->user() : remote_user, prompter));
  RV_TRY_VOID(record(std::move(slurm)));
  std::string cache_root;
  RV_TRY(storage, init_steps::storage(o, a, *runner, prompter, cache_root));
  RV_TRY_VOID(record(std::move(storage)));

  report.config = {{"host", destination_of(a)}, {"identity_file", a.identity}};
  if (o.ssh_config_given) { // the file that resolves the alias and its key, for every later command
    report.config.emplace_back("ssh_config", o.ssh_config);
  }
  if (!known_hosts.empty()) {
    report.config.emplace_back("known_hosts", known_hosts);
  }
  if (!a.account.empty()) {
    report.config.emplace_back("account", a.account);
  }
  report.config.emplace_back("scratch_root", cache_root);
  for (const auto& [k, v] : report.config) {
    RV_TRY_VOID(world.set_config(k, v));
  }
  return report;
}

} // namespace rv::app
