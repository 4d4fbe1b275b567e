// Session::authenticate: Kerberos and the keys in OpenSSH's order, with what libssh 0.10 leaves to
// its caller: GSSAPIAuthentication (libssh tries gssapi-with-mic only when asked), user
// certificates (`<key>-cert.pub` beside a key, `CertificateFile`), IdentitiesOnly, and a clear
// word on a certificate that expired (docs/ssh.md, "Certificates", "Kerberos").
#include "core/ssh/cert.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/kerberos.hpp"
#include "core/ssh/session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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

} // namespace

struct Session::KeyAttempts {
  std::vector<std::string> problems; // `FILE: why it was not offered`
  bool key_needs_agent = false;      // a key file could not be read (a passphrase): the agent may hold it
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
  ssh_key raw_key = nullptr;
  if (ssh_pki_import_privkey_file(key_file.c_str(), nullptr, nullptr, nullptr, &raw_key) != SSH_OK) {
    attempts.key_needs_agent = true;
    return std::nullopt;
  }
  KeyPtr key(raw_key);
  return ssh_userauth_publickey(m_session.get(), nullptr, key.get());
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
    if (!rc && i == 0 && !m_options.identity_file.empty()) {
      return std::unexpected(ssh_failure(ErrorCode::auth_failed, label(),
                                         fmt::format("cannot read private key {}", keys[i]), {},
                                         "check the path, and that the key has no passphrase or is in ssh-agent"));
    }
    if (done(attempts.last_rc) || attempts.last_rc == SSH_AUTH_ERROR) {
      return finish(attempts.last_rc, auth_failure(label(), ssh_get_error(m_session.get())));
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
