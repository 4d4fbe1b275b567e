#include "app/init/init.hpp"
#include "app/init/init_steps.hpp"

#include "core/process/ssh_failures.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace rv::app {
namespace {

using nlohmann::json;

constexpr int k_password_tries = 3;

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
  s.ssh_dir = o.ssh_dir;
  s.connect_timeout = o.connect_timeout;
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

// The key: -i (used, or generated there), else a default key, else a new ed25519 key.
Result<json> key_step(const InitOptions& o, InitAnswers& a, InitWorld& world, Prompter& prompter, proc::KeyPair& pair)
{
  std::string path = !o.identity.empty() ? o.identity : a.identity;
  std::optional<std::string> existing;
  if (!path.empty()) {
    if (world.exists(path)) {
      existing = path;
    }
  } else {
    existing = world.find_key(o.ssh_dir);
    path = existing.value_or(o.ssh_dir + "/id_ed25519");
  }
  if (existing) {
    RV_TRY(found, world.read_key(*existing));
    pair = found;
  } else {
    RV_TRY(made, world.generate_key(path, o.key_comment));
    pair = made;
    prompter.say(fmt::format("generated an ed25519 key: {} ({})", path, pair.fingerprint));
  }
  a.identity = pair.private_path;
  return json{{"step", "key"},
              {"status", pair.generated ? "done" : "unchanged"},
              {"path", pair.private_path},
              {"type", pair.type},
              {"fingerprint", pair.fingerprint},
              {"generated", pair.generated}};
}

// Logs in with the key; when the host refuses it, with a password (3 tries), then installs it.
Result<json> install_step(proc::SshBootstrap& ssh, const proc::KeyPair& pair, Prompter& prompter)
{
  json step{{"step", "install_key"}};
  if (ssh.login_with_keys(pair.private_path)) {
    step["status"] = "unchanged";
    step["detail"] = "the host already accepts the key";
    return step;
  }
  Result<void> login = fail(ErrorCode::auth_failed, "no password given");
  for (int attempt = 1; attempt <= k_password_tries; ++attempt) {
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

} // namespace

json to_json(const InitAnswers& a)
{
  return json{{"host", a.host},         {"user", a.user},       {"port", a.port},      {"identity", a.identity},
              {"host_key", a.host_key}, {"account", a.account}, {"scratch", a.scratch}};
}

InitAnswers init_answers_from_json(const json& j)
{
  InitAnswers a;
  if (!j.is_object()) {
    return a;
  }
  a.host = j.value("host", "");
  a.user = j.value("user", "");
  a.port = j.value("port", 0);
  a.identity = j.value("identity", "");
  a.host_key = j.value("host_key", "");
  a.account = j.value("account", "");
  a.scratch = j.value("scratch", "");
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
  RV_TRY(host, host_step(o, a, prompter));
  RV_TRY_VOID(record(std::move(host)));

  auto ssh = world.bootstrap(ssh_options(o, a));
  RV_TRY(host_key, host_key_step(o, a, *ssh, prompter));
  // Written to the config, so that later commands check the same file whatever libssh's default.
  const std::string known_hosts = host_key.value("known_hosts", "");
  RV_TRY_VOID(record(std::move(host_key)));

  proc::KeyPair pair;
  RV_TRY(key, key_step(o, a, world, prompter, pair));
  RV_TRY_VOID(record(std::move(key)));
  RV_TRY(install, install_step(*ssh, pair, prompter));
  RV_TRY_VOID(record(std::move(install)));
  const std::string remote_user = ssh->user();
  ssh.reset(); // the password session ends here: everything after it uses the key alone

  auto runner = world.runner(ssh_options(o, a));
  proc::Command check;
  check.argv = {"true"};
  check.timeout = std::chrono::seconds(30);
  auto verified = runner->run(check);
  if (!verified || !verified->ok()) {
    return fail(ErrorCode::auth_failed,
                fmt::format("the key {} was installed, but logging in with it failed: {}", pair.private_path,
                            verified ? verified->err : verified.error().message),
                "sshd refuses keys when the cluster home, ~/.ssh or authorized_keys are writable by others "
                "(StrictModes): chmod go-w ~ ~/.ssh there");
  }
  RV_TRY_VOID(record(json{{"step", "verify"}, {"status", "done"}, {"detail", "key login works"}}));

  RV_TRY(slurm, init_steps::slurm(o, a, *runner, remote_user.empty() ? runner->user() : remote_user, prompter));
  RV_TRY_VOID(record(std::move(slurm)));
  std::string cache_root;
  RV_TRY(storage, init_steps::storage(o, a, *runner, prompter, cache_root));
  RV_TRY_VOID(record(std::move(storage)));

  report.config = {{"host", destination_of(a)}, {"identity_file", a.identity}};
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
