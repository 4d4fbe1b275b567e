#include "core/ssh/session.hpp"

#include "core/process/local_runner.hpp"
#include "core/ssh/failures.hpp"
#include "core/ssh/kbdint.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <libssh/callbacks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <unistd.h>

namespace rv::proc::ssh {
namespace {

constexpr int k_code_tries = 3; // a second factor's code, asked again after a refusal

void route_libssh_log(int priority, const char* function, const char* buffer, void*)
{
  spdlog::trace("libssh({}) {}: {}", priority, function ? function : "", buffer ? buffer : "");
}

KnownHost known_host(ssh_known_hosts_e state)
{
  switch (state) {
  case SSH_KNOWN_HOSTS_OK:
    return KnownHost::ok;
  case SSH_KNOWN_HOSTS_CHANGED:
    return KnownHost::changed;
  case SSH_KNOWN_HOSTS_OTHER:
    return KnownHost::other_type;
  case SSH_KNOWN_HOSTS_NOT_FOUND:
    return KnownHost::not_found;
  case SSH_KNOWN_HOSTS_UNKNOWN:
    return KnownHost::unknown;
  case SSH_KNOWN_HOSTS_ERROR:
    break;
  }
  return KnownHost::error;
}

// A string option of `session` as the config left it ("" when unset).
std::string string_option(ssh_session session, ssh_options_e option)
{
  char* raw = nullptr;
  if (ssh_options_get(session, option, &raw) != SSH_OK) {
    return {};
  }
  CharPtr value(raw);
  return value ? std::string(value.get()) : std::string();
}

// The SHA256 fingerprint of the server's key, "?" when libssh cannot tell.
std::string server_fingerprint(ssh_session session)
{
  ssh_key raw_key = nullptr;
  if (ssh_get_server_publickey(session, &raw_key) != SSH_OK) {
    return "?";
  }
  KeyPtr key(raw_key);
  unsigned char* raw_hash = nullptr;
  std::size_t length = 0;
  if (ssh_get_publickey_hash(key.get(), SSH_PUBLICKEY_HASH_SHA256, &raw_hash, &length) != 0) {
    return "?";
  }
  HashPtr hash(raw_hash);
  CharPtr text(ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash.get(), length));
  return text ? std::string(text.get()) : "?";
}

// The known_hosts file: the one named, else the ssh config's UserKnownHostsFile (`~/` and `%d`
// expanded against ssh_dir), else rv's config file's (rv init's), else <ssh_dir>/known_hosts ("" when
// none is known: libssh's default).
std::string known_hosts_path(const SshOptions& options, std::string from_config)
{
  if (!options.known_hosts.empty()) {
    return options.known_hosts;
  }
  if (from_config.empty() && !options.known_hosts_fallback.empty()) {
    return options.known_hosts_fallback;
  }
  const std::string& dir = options.ssh_dir;
  if (from_config.empty()) {
    return dir.empty() ? std::string() : dir + "/known_hosts";
  }
  if (dir.empty()) {
    return from_config;
  }
  if (from_config.starts_with("~/") && dir.ends_with("/.ssh")) {
    from_config = dir.substr(0, dir.size() - 5) + from_config.substr(1);
  }
  if (auto at = from_config.find("%d"); at != std::string::npos) {
    from_config.replace(at, 2, dir);
  }
  return from_config;
}

} // namespace

Error Session::failure(ErrorCode code, std::string_view what, std::string hint) const
{
  return ssh_failure(code, label(), what, m_session ? ssh_get_error(m_session.get()) : "", std::move(hint));
}

Result<void> Session::configure(const SshDestination& dest)
{
  ssh_session s = m_session.get();
  if (spdlog::should_log(spdlog::level::trace)) {
    ssh_set_log_callback(route_libssh_log);
    int verbosity = SSH_LOG_PROTOCOL;
    ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
  }
  ssh_options_set(s, SSH_OPTIONS_HOST, dest.host.c_str());
  // The ssh config fills in HostName, Port, User, IdentityFile, ProxyJump... for the alias;
  // what the user typed explicitly wins, so it is set afterwards.
  if (m_options.ssh_config.empty()) {
    int no = 0;
    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
  } else if (ssh_options_parse_config(s, m_options.ssh_config.c_str()) != 0) {
    return std::unexpected(failure(ErrorCode::config, fmt::format("cannot parse ssh config {}", m_options.ssh_config),
                                   "fix the file, or pass --ssh-config '' to read none"));
  }
  read_openssh_view(dest);
  SshEndpoint from_config{string_option(s, SSH_OPTIONS_USER), string_option(s, SSH_OPTIONS_HOST), 22};
  ssh_options_get_port(s, &from_config.port);
  const auto endpoint = resolve_endpoint(dest, from_config);
  if (!dest.user.empty()) {
    ssh_options_set(s, SSH_OPTIONS_USER, endpoint.user.c_str());
  }
  if (dest.port != 0) {
    ssh_options_set(s, SSH_OPTIONS_PORT, &endpoint.port);
  }
  if (!m_options.ssh_dir.empty()) {
    ssh_options_set(s, SSH_OPTIONS_SSH_DIR, m_options.ssh_dir.c_str());
  }
  m_known_hosts = known_hosts_path(m_options, string_option(s, SSH_OPTIONS_KNOWNHOSTS));
  if (!m_known_hosts.empty()) {
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, m_known_hosts.c_str());
  }
  long timeout = static_cast<long>(m_options.connect_timeout.count());
  ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout);
  // TCP_NODELAY, as OpenSSH's client sets it: libssh's default leaves Nagle on, and a small
  // packet (an exec, a channel open) that follows an unacknowledged one waits for the server's
  // delayed ACK, 40 ms on Linux (docs/ssh.md, "Surprises met on the way").
  int nodelay = 1;
  ssh_options_set(s, SSH_OPTIONS_NODELAY, &nodelay);
  m_label = endpoint.label();
  m_user = endpoint.user;
  return set_proxy_jump(endpoint);
}

void Session::read_openssh_view(const SshDestination& dest)
{
  m_view = {};
  if (m_options.ssh_config.empty()) {
    return;
  }
  std::ifstream in(m_options.ssh_config);
  const std::string config_text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!config_needs_openssh(config_text) || !on_path("ssh")) {
    return;
  }
  Command cmd;
  cmd.argv = {"ssh", "-G", "-F", m_options.ssh_config};
  if (!dest.user.empty()) {
    cmd.argv.insert(cmd.argv.end(), {"-l", dest.user});
  }
  cmd.argv.push_back(dest.host);
  cmd.stdin_data = "";
  cmd.timeout = std::chrono::seconds(5);
  auto out = LocalRunner().run(cmd);
  if (!out || !out->ok()) {
    spdlog::debug("ssh: `ssh -G {}` failed ({}); libssh's reading of {} only", dest.host,
                  out ? text::shorten(text::trim(out->err)) : out.error().message, m_options.ssh_config);
    return;
  }
  std::string home;
  if (m_options.ssh_dir.ends_with("/.ssh")) {
    home = m_options.ssh_dir.substr(0, m_options.ssh_dir.size() - 5);
  } else if (const char* env = std::getenv("HOME")) {
    home = env;
  }
  m_view = parse_openssh_view(out->out, home);
}

Result<void> Session::set_proxy_jump(const SshEndpoint& endpoint)
{
  m_jump_log.clear();
  if (m_view.proxy_jump.empty()) {
    return {};
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string log = fmt::format("{}/rv-jump-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  const int fd = ::mkstemp(log.data());
  if (fd >= 0) {
    ::close(fd);
    m_jump_log = log;
  }
  JumpSpec spec{m_view.proxy_jump, m_options.ssh_config, m_options.known_hosts,     m_jump_log,
                endpoint.host,     endpoint.port,        m_options.connect_timeout, m_options.known_hosts_fallback};
  RV_TRY(argv, proxy_jump_argv(spec));
  const auto line = proxy_command_line(argv);
  spdlog::debug("ssh: {} through ProxyJump {}: {}", label(), m_view.proxy_jump, text::join(argv, " "));
  ssh_options_set(m_session.get(), SSH_OPTIONS_PROXYCOMMAND, line.c_str());
  return {};
}

std::string Session::take_jump_error()
{
  if (m_jump_log.empty()) {
    return {};
  }
  std::ifstream in(m_jump_log);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (!text::trim(line).empty()) {
      last = std::string(text::trim(line));
    }
  }
  ::unlink(m_jump_log.c_str());
  m_jump_log.clear();
  return last;
}

Result<void> Session::verify_host_key()
{
  const auto fingerprint = server_fingerprint(m_session.get());
  const auto state = known_host(ssh_session_is_known_server(m_session.get()));
  return host_key_verdict(state, label(), fingerprint, ssh_get_error(m_session.get()));
}

Result<void> Session::finish(int rc, Error refused)
{
  if (rc == SSH_AUTH_SUCCESS) {
    return {};
  }
  if (rc != SSH_AUTH_PARTIAL) {
    return std::unexpected(std::move(refused));
  }
  // The key was accepted and the server wants more: a second factor.
  const auto methods = static_cast<unsigned>(ssh_userauth_list(m_session.get(), nullptr));
  if ((methods & SSH_AUTH_METHOD_INTERACTIVE) == 0u) {
    return std::unexpected(ssh_failure(ErrorCode::auth_failed, label(),
                                       "the host accepted the key but asks for another method rv cannot give", {},
                                       "rv answers keyboard-interactive second factors (docs/ssh.md)"));
  }
  spdlog::debug("ssh: {} accepted the key and asks for a second factor", label());
  m_key_accepted = true;
  // A mistyped code is asked again, as OpenSSH does (NumberOfPasswordPrompts, 3): the key's
  // partial success stands, so a new exchange needs no new key attempt.
  for (int attempt = 1;; ++attempt) {
    auto answered = keyboard_interactive(std::nullopt);
    if (answered || !m_answers_refused || attempt == k_code_tries) {
      return answered;
    }
    spdlog::warn("ssh {}: the code was refused ({} of {} tries); asking again", label(), attempt, k_code_tries);
  }
}

Result<void> Session::keyboard_interactive(std::optional<std::string> password)
{
  ssh_session s = m_session.get();
  std::shared_ptr<SecondFactorPrompter> user = m_options.second_factor;
  if (!user) {
    user = user_prompter(label());
  }
  m_answers_refused = false;
  int rc = ssh_userauth_kbdint(s, nullptr, nullptr);
  for (int rounds = 0; rc == SSH_AUTH_INFO && rounds < 16; ++rounds) {
    KbdintRound round;
    const char* name = ssh_userauth_kbdint_getname(s);
    const char* instruction = ssh_userauth_kbdint_getinstruction(s);
    round.name = name ? name : "";
    round.instruction = instruction ? instruction : "";
    const int count = ssh_userauth_kbdint_getnprompts(s);
    for (int i = 0; i < count; ++i) {
      char echo = 0;
      const char* text = ssh_userauth_kbdint_getprompt(s, static_cast<unsigned>(i), &echo);
      round.prompts.push_back({text ? text : "", echo != 0});
    }
    auto answers = answer_round(round, password, *user);
    if (!answers) {
      if (answers.error().message.find(label()) == std::string::npos) {
        answers.error().message = fmt::format("ssh {}: {}", label(), answers.error().message);
      }
      return std::unexpected(answers.error());
    }
    for (std::size_t i = 0; i < answers->size(); ++i) {
      ssh_userauth_kbdint_setanswer(s, static_cast<unsigned>(i), (*answers)[i].c_str());
      std::fill((*answers)[i].begin(), (*answers)[i].end(), '\0');
    }
    rc = ssh_userauth_kbdint(s, nullptr, nullptr);
  }
  if (rc == SSH_AUTH_SUCCESS) {
    return {};
  }
  m_answers_refused = rc == SSH_AUTH_DENIED;
  return std::unexpected(ssh_failure(ErrorCode::auth_failed, label(),
                                     rc == SSH_AUTH_PARTIAL ? "the host asks for yet another method after the prompts"
                                                            : "the answers to the host's prompts were refused",
                                     rc == SSH_AUTH_ERROR ? ssh_get_error(s) : "",
                                     "check the code (a TOTP code is valid for 30 s) and try again"));
}

Result<void> Session::open()
{
  if (m_session) {
    return {};
  }
  RV_TRY(dest, parse_destination(m_options.destination));
  SessionPtr session(ssh_new());
  if (!session) {
    return std::unexpected(ssh_failure(ErrorCode::io, label(), "cannot create a libssh session"));
  }
  // Only a session that passes every step is kept: an early return frees it.
  m_session = std::move(session);
  auto opened = [&]() -> Result<void> {
    RV_TRY_VOID(configure(dest));
    const bool through_jump = !m_view.proxy_jump.empty();
    const int rc = ssh_connect(m_session.get());
    const auto jump_said = take_jump_error();
    if (rc != SSH_OK) {
      if (through_jump) {
        return std::unexpected(ssh_failure(ErrorCode::unreachable, label(),
                                           fmt::format("cannot connect through ProxyJump {}", m_view.proxy_jump),
                                           jump_said.empty() ? ssh_get_error(m_session.get()) : jump_said,
                                           fmt::format("check that `ssh -F {} {} true` works: it takes the same jump",
                                                       m_options.ssh_config, m_options.destination)));
      }
      return std::unexpected(connect_failure(label(), ssh_get_error(m_session.get())));
    }
    return {};
  }();
  if (!opened) {
    m_session.reset();
  }
  return opened;
}

HostKeyInfo Session::host_key() const
{
  HostKeyInfo info;
  info.known_hosts_file = m_known_hosts;
  if (!m_session) {
    return info;
  }
  info.fingerprint = server_fingerprint(m_session.get());
  ssh_key raw_key = nullptr;
  if (ssh_get_server_publickey(m_session.get(), &raw_key) == SSH_OK) {
    KeyPtr key(raw_key);
    const char* type = ssh_key_type_to_char(ssh_key_type(key.get()));
    info.type = type ? type : "?";
  }
  info.state = known_host(ssh_session_is_known_server(m_session.get()));
  return info;
}

Result<void> Session::trust_host_key()
{
  if (ssh_session_update_known_hosts(m_session.get()) != SSH_OK) {
    return std::unexpected(failure(ErrorCode::io, fmt::format("cannot write the host key to {}", m_known_hosts),
                                   "check that the file and its directory are writable"));
  }
  return {};
}

Result<void> Session::authenticate_password(const std::string& password)
{
  ssh_session s = m_session.get();
  int rc = ssh_userauth_none(s, nullptr);
  if (rc == SSH_AUTH_SUCCESS) {
    return {};
  }
  // The password answers one password prompt at most, never a code's (security review N9).
  std::optional<std::string> once = password;
  const auto methods = static_cast<unsigned>(ssh_userauth_list(s, nullptr));
  if ((methods & SSH_AUTH_METHOD_PASSWORD) != 0u) {
    rc = ssh_userauth_password(s, nullptr, password.c_str());
    once.reset();
    if (rc == SSH_AUTH_SUCCESS || rc == SSH_AUTH_PARTIAL) {
      return finish(rc, Error{});
    }
  }
  if ((methods & SSH_AUTH_METHOD_INTERACTIVE) != 0u && once) {
    return keyboard_interactive(std::move(once));
  }
  if ((methods & (SSH_AUTH_METHOD_PASSWORD | SSH_AUTH_METHOD_INTERACTIVE)) == 0u) {
    return std::unexpected(ssh_failure(ErrorCode::auth_failed, label(),
                                       "the host accepts neither password nor keyboard-interactive logins", {},
                                       "install your public key by another way (your site's portal, or an admin)"));
  }
  return std::unexpected(ssh_failure(ErrorCode::auth_failed, label(), "the password was refused",
                                     rc == SSH_AUTH_ERROR ? ssh_get_error(s) : "", "check the user name and password"));
}

Result<void> Session::connect()
{
  if (m_session) {
    return {};
  }
  const auto start = std::chrono::steady_clock::now();
  RV_TRY_VOID(open());
  auto ready = [&]() -> Result<void> {
    RV_TRY_VOID(verify_host_key());
    RV_TRY_VOID(authenticate());
    spdlog::debug(
        "ssh: connected to {} in {} ms", label(),
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count());
    return {};
  }();
  if (!ready) {
    m_session.reset();
  }
  return ready;
}

} // namespace rv::proc::ssh
