// Session::authenticate: Kerberos and the keys in OpenSSH's order, with what libssh 0.10 leaves to
// its caller: GSSAPIAuthentication (libssh tries gssapi-with-mic only when asked), user
// certificates (`<key>-cert.pub` beside a key, `CertificateFile`), IdentitiesOnly, a key's
// passphrase asked on the terminal when the agent did not log in (as OpenSSH does), and a clear
// word on a certificate that expired (docs/ssh.md, "Keys with a passphrase", "Certificates", "Kerberos").
#include "core/secure_memory.hpp"
#include "core/ssh/cert.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/kbdint.hpp"
#include "core/ssh/kerberos.hpp"
#include "core/ssh/private_key.hpp"
#include "core/ssh/session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>

namespace rv::proc::ssh {
namespace {

bool is_file(const std::string& path)
{
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec);
}

std::string first_line(const std::string& path)
{
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool done(int rc)
{
  return rc == SSH_AUTH_SUCCESS || rc == SSH_AUTH_PARTIAL;
}

constexpr int k_passphrase_tries = 3; // OpenSSH's NumberOfPasswordPrompts

} // namespace

struct Session::KeyAttempts {
  std::vector<std::string> problems; // `FILE: why it was not offered`
  bool key_needs_agent = false;      // a key file could not be read (a passphrase): the agent may hold it
  std::vector<std::string> locked;   // key files with a passphrase, in order: asked for after the agent
  std::string unasked;               // the first of them the host would take that no one could unlock here
  int last_rc = SSH_AUTH_DENIED;
  std::string gssapi_problem; // why Kerberos did not log in, when it was tried
  std::string gssapi_hint;    // what to do about it, when not `kinit`
};

int Session::try_certificate(const std::string& key_file, const std::string& cert_file, KeyAttempts& attempts)
{
  auto cert = parse_certificate(first_line(cert_file));
  if (!cert) {
    spdlog::debug("ssh: {}: {}", cert_file, cert.error().message);
    return SSH_AUTH_DENIED;
  }
  if (auto problem = certificate_problem(*cert, std::time(nullptr), m_user); !problem.empty()) {
    attempts.problems.push_back(fmt::format("{}: {}", cert_file, problem));
    return SSH_AUTH_DENIED;
  }
  ssh_key raw_cert = nullptr;
  ssh_key raw_key = nullptr;
  if (ssh_pki_import_cert_file(cert_file.c_str(), &raw_cert) != SSH_OK) {
    return SSH_AUTH_DENIED;
  }
  KeyPtr cert_key(raw_cert);
  if (ssh_pki_import_privkey_file(key_file.c_str(), nullptr, nullptr, nullptr, &raw_key) != SSH_OK) {
    attempts.key_needs_agent = true;
    return SSH_AUTH_DENIED;
  }
  KeyPtr key(raw_key);
  // Fails when the certificate is of another key: CertificateFile is tried with every identity.
  if (ssh_pki_copy_cert_to_privkey(cert_key.get(), key.get()) != SSH_OK) {
    return SSH_AUTH_DENIED;
  }
  spdlog::debug("ssh: offering {} with the certificate {} (id {})", key_file, cert_file, cert->key_id);
  return ssh_userauth_publickey(m_session.get(), nullptr, key.get());
}

std::optional<int> Session::try_key_file(const std::string& key_file, KeyAttempts& attempts)
{
  KeyPtr key;
  const auto read = read_private_key(key_file, nullptr, key);
  if (read == KeyFile::locked && std::ranges::find(attempts.locked, key_file) == attempts.locked.end()) {
    attempts.locked.push_back(key_file);
  }
  if (read != KeyFile::ok) {
    attempts.key_needs_agent = true;
    return std::nullopt;
  }
  return ssh_userauth_publickey(m_session.get(), nullptr, key.get());
}

std::optional<Result<void>> Session::try_locked_key(const std::string& key_file, KeyAttempts& attempts)
{
  ssh_session s = m_session.get();
  // Asked only for a key the host would take (OpenSSH's order: the public key first).
  if (auto pub = public_key_of(key_file)) {
    const int probe = ssh_userauth_try_publickey(s, nullptr, pub.get());
    if (probe == SSH_AUTH_ERROR) {
      return finish(probe, auth_failure(label(), ssh_get_error(s)));
    }
    if (probe != SSH_AUTH_SUCCESS) {
      spdlog::debug("ssh: {}: the host does not take {}; its passphrase is not asked", label(), key_file);
      return std::nullopt;
    }
  }
  std::shared_ptr<SecondFactorPrompter> user = m_options.second_factor;
  if (!user) {
    user = user_prompter(label());
  }
  if (m_view.batch_mode || !user->can_ask()) {
    spdlog::debug("ssh: {}: {} has a passphrase and {}", label(), key_file,
                  m_view.batch_mode ? "BatchMode is on" : "there is no terminal to ask it on");
    if (attempts.unasked.empty()) {
      attempts.unasked = key_file;
    }
    return std::nullopt;
  }
  const KbdintRound round{"", "", {{fmt::format("Enter passphrase for key '{}': ", key_file), false}}};
  for (int attempt = 1; attempt <= k_passphrase_tries; ++attempt) {
    auto answers = user->answer(round);
    if (!answers) {
      if (answers.error().message.find(label()) == std::string::npos) {
        answers.error().message = fmt::format("ssh {}: {}", label(), answers.error().message);
      }
      return std::unexpected(answers.error());
    }
    if (answers->empty() || (*answers)[0].empty()) { // Enter alone skips the key, as in OpenSSH
      return std::nullopt;
    }
    KeyPtr key;
    const auto read = read_private_key(key_file, (*answers)[0].c_str(), key);
    for (auto& answer : *answers) {
      wipe(answer);
    }
    if (read == KeyFile::ok) {
      spdlog::debug("ssh: {}: offering {} (unlocked with its passphrase)", label(), key_file);
      attempts.last_rc = ssh_userauth_publickey(s, nullptr, key.get());
      return finish(attempts.last_rc,
                    auth_failure(label(), attempts.last_rc == SSH_AUTH_ERROR ? ssh_get_error(s) : ""));
    }
    if (read == KeyFile::unreadable) {
      return std::nullopt;
    }
    if (attempt < k_passphrase_tries) {
      spdlog::warn("ssh {}: wrong passphrase for {} ({} of {} tries); asking again", label(), key_file, attempt,
                   k_passphrase_tries);
    }
  }
  return std::unexpected(ssh_failure(
      ErrorCode::auth_failed, label(),
      fmt::format("wrong passphrase for key '{}' ({} tries)", key_file, k_passphrase_tries), {},
      fmt::format(
          "type the key's passphrase (`ssh-keygen -y -f {0}` checks it), or load the key once with `ssh-add {0}`",
          key_file)));
}

std::optional<Result<void>> Session::authenticate_files(KeyAttempts& attempts)
{
  std::vector<std::string> keys;
  if (!m_options.identity_file.empty()) {
    keys.push_back(m_options.identity_file);
  }
  keys.insert(keys.end(), m_view.identity_files.begin(), m_view.identity_files.end());
  if (m_view.identity_files.empty()) { // the default keys, for a certificate beside one
    const char* home = std::getenv("HOME");
    const std::string dir = !m_options.ssh_dir.empty() ? m_options.ssh_dir : home ? std::string(home) + "/.ssh" : "";
    for (const char* name : {"id_rsa", "id_ecdsa", "id_ed25519"}) {
      if (!dir.empty()) {
        keys.push_back(dir + "/" + name);
      }
    }
  }
  // Certificates first: a site that signs keys may not list them in authorized_keys at all.
  for (const auto& key : keys) {
    std::vector<std::string> certs{key + "-cert.pub"};
    certs.insert(certs.end(), m_view.certificate_files.begin(), m_view.certificate_files.end());
    for (const auto& cert : certs) {
      if (!is_file(key) || !is_file(cert)) {
        continue;
      }
      attempts.last_rc = try_certificate(key, cert, attempts);
      if (done(attempts.last_rc) || attempts.last_rc == SSH_AUTH_ERROR) {
        return finish(attempts.last_rc, auth_failure(label(), ssh_get_error(m_session.get())));
      }
    }
  }
  // The plain keys: `-i KEY`, and with IdentitiesOnly every identity file (the agent is then asked
  // only for a key whose file could not be read).
  const std::size_t plain = m_view.identities_only ? keys.size() : (m_options.identity_file.empty() ? 0 : 1);
  for (std::size_t i = 0; i < plain; ++i) {
    if (!is_file(keys[i])) {
      continue;
    }
    const auto rc = try_key_file(keys[i], attempts);
    attempts.last_rc = rc.value_or(SSH_AUTH_DENIED);
    if (!rc && i == 0 && !m_options.identity_file.empty() &&
        std::ranges::find(attempts.locked, keys[i]) == attempts.locked.end()) {
      return std::unexpected(
          ssh_failure(ErrorCode::auth_failed, label(), fmt::format("cannot read private key {}", keys[i]), {},
                      "check the path, and that it is a private key (ssh-keygen -y -f KEY reads it)"));
    }
    if (done(attempts.last_rc) || attempts.last_rc == SSH_AUTH_ERROR) {
      return finish(attempts.last_rc, auth_failure(label(), ssh_get_error(m_session.get())));
    }
  }
  // The rest (libssh's own walk, below) skips a key with a passphrase: noted, to be asked for after
  // the agent. A read without a passphrase stops before the key derivation: no time spent.
  for (std::size_t i = plain; i < keys.size(); ++i) {
    KeyPtr unused;
    if (is_file(keys[i]) && std::ranges::find(attempts.locked, keys[i]) == attempts.locked.end() &&
        read_private_key(keys[i], nullptr, unused) == KeyFile::locked) {
      attempts.locked.push_back(keys[i]);
    }
  }
  return std::nullopt;
}

Result<void> Session::authenticate()
{
  ssh_session s = m_session.get();
  KeyAttempts attempts;
  // GSSAPIAuthentication yes: a Kerberos ticket first, as OpenSSH orders gssapi-with-mic before
  // publickey. Without a ticket libssh declines before asking the host; then the keys go on.
  // The static release binary has no Kerberos (core/ssh/kerberos.hpp).
  if (m_view.gssapi && !kerberos_support().available) {
    attempts.gssapi_problem = "GSSAPIAuthentication yes, but " + kerberos_support().detail;
    attempts.gssapi_hint = kerberos_support().hint;
    spdlog::debug("ssh: {}: {}", label(), attempts.gssapi_problem);
  } else if (m_view.gssapi) {
    const int rc = ssh_userauth_gssapi(s);
    if (done(rc)) {
      spdlog::debug("ssh: {}: logged in with a Kerberos ticket (GSSAPI)", label());
      return finish(rc, auth_failure(label(), ""));
    }
    attempts.gssapi_problem = ssh_get_error(s);
    if (attempts.gssapi_problem.empty()) {
      attempts.gssapi_problem = "no Kerberos ticket was accepted (none in the cache, or the host refused it)";
    }
    spdlog::debug("ssh: {}: GSSAPI: {}", label(), attempts.gssapi_problem);
  }
  if (auto files = authenticate_files(attempts)) {
    return *files;
  }
  int rc = SSH_AUTH_DENIED;
  if (!m_view.identities_only) {
    // Agent, then IdentityFile entries from the ssh config, then the default keys.
    rc = ssh_userauth_publickey_auto(s, nullptr, nullptr);
  } else if (attempts.key_needs_agent) {
    rc = ssh_userauth_agent(s, nullptr);
  }
  // The agent did not log in: a key with a passphrase is unlocked with it, asked on the terminal.
  for (std::size_t i = 0; !done(rc) && rc != SSH_AUTH_ERROR && i < attempts.locked.size(); ++i) {
    if (auto unlocked = try_locked_key(attempts.locked[i], attempts)) {
      return *unlocked;
    }
  }
  if (!done(rc) && !attempts.unasked.empty()) {
    return std::unexpected(ssh_failure(
        ErrorCode::auth_failed, label(),
        fmt::format("the key '{}' has a passphrase, and {}", attempts.unasked,
                    m_view.batch_mode ? "BatchMode yes forbids asking it" : "there is no terminal to ask it on"),
        {},
        fmt::format("load it into ssh-agent once (`ssh-add {}`), or run `rv connect` in a terminal and type it there "
                    "(later commands use the held connection)",
                    attempts.unasked)));
  }
  if (!done(rc) && !attempts.problems.empty()) {
    return std::unexpected(ssh_failure(
        ErrorCode::auth_failed, label(), "every key was refused, and a certificate was not offered",
        attempts.problems.front(),
        "get a new certificate from your site's CA (`ssh-keygen -L -f FILE` shows the one you have), then retry"));
  }
  if (!done(rc) && !attempts.gssapi_problem.empty()) {
    return std::unexpected(ssh_failure(
        ErrorCode::auth_failed, label(),
        attempts.gssapi_hint.empty() ? "the host refused Kerberos (GSSAPI) and every key"
                                     : "Kerberos (GSSAPI) cannot be used here, and the host refused every key",
        attempts.gssapi_problem,
        !attempts.gssapi_hint.empty()
            ? attempts.gssapi_hint
            : "get a Kerberos ticket with `kinit` (`klist` shows the one you have), then retry"));
  }
  return finish(rc, auth_failure(label(), rc == SSH_AUTH_ERROR ? ssh_get_error(s) : ""));
}

} // namespace rv::proc::ssh
