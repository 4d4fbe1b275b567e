#include "app/node/ssh_shell.hpp"
#include "core/process/shell.hpp"
#include "slurm/jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

namespace rv::app {
namespace {

constexpr std::string_view begin_marker = "# BEGIN rv";
constexpr std::string_view end_marker = "# END rv";

// The offset of `marker` as a whole line of `text` at or after `from`, or npos.
std::size_t find_line(const std::string& text, std::string_view marker, std::size_t from = 0)
{
  for (auto at = text.find(marker, from); at != std::string::npos; at = text.find(marker, at + 1)) {
    const bool starts = at == 0 || text[at - 1] == '\n';
    const auto after = at + marker.size();
    const bool ends = after == text.size() || text[after] == '\n' || text[after] == '\r';
    if (starts && ends) {
      return at;
    }
  }
  return std::string::npos;
}

} // namespace

std::vector<std::string> step_argv(const NodeTarget& t, const std::vector<std::string>& command)
{
  slurm::StepOptions step;
  step.job_id = t.job_id;
  step.nodelist = {t.node};
  step.pty = command.empty();
  std::vector<std::string> program = command;
  if (command.empty()) {
    program = {"bash", "-l"};
  } else if (command.size() == 1) {
    program = {"bash", "-c", command.front()};
  }
  if (!t.workdir.empty()) { // N6: where the job's command runs, not the home directory
    program = {"bash", "-c",
               fmt::format("cd -- {} || exit 1\nexec {}", proc::shell_quote(t.workdir), proc::shell_join(program))};
  }
  return slurm::step_argv(step, program);
}

Result<int> open_on_node(Env& env, const NodeTarget& t, const std::vector<std::string>& command)
{
  auto argv = step_argv(t, command);
  if (command.empty()) {
    return env.cluster.run_interactive(argv);
  }
  proc::Command c;
  c.argv = std::move(argv);
  c.timeout = std::chrono::milliseconds(0);
  c.on_stdout = [&](std::string_view s) { env.output.out(s); };
  c.on_stderr = [&](std::string_view s) { env.output.err(s); };
  RV_TRY(o, env.cluster.run(c));
  return o.status();
}

LoginHop login_hop(const std::string& where, const std::string& given)
{
  LoginHop hop;
  hop.given = given;
  constexpr std::string_view prefix = "ssh ";
  if (!where.starts_with(prefix)) {
    return hop; // local: no hop
  }
  std::string rest = where.substr(prefix.size());
  if (auto at = rest.find('@'); at != std::string::npos) {
    hop.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
  }
  // host:port, or [v6addr]:port
  const auto colon = rest.starts_with('[') ? rest.find("]:") + 1 : rest.find(':');
  if (colon != std::string::npos && colon != 0 && rest.find(':', colon + 1) == std::string::npos) {
    int port = 0;
    auto p = rest.substr(colon + 1);
    if (std::from_chars(p.data(), p.data() + p.size(), port).ec == std::errc{} && port > 0) {
      hop.port = port;
      rest = rest.substr(0, colon);
    }
  }
  hop.host = rest;
  return hop;
}

std::string proxy_jump(const LoginHop& login)
{
  const bool alias =
      !login.given.empty() && login.given.find_first_of("@:[") == std::string::npos && login.given != login.host;
  if (alias) {
    return login.given;
  }
  std::string jump = login.user.empty() ? login.host : login.user + "@" + login.host;
  return login.port == 22 ? jump : fmt::format("{}:{}", jump, login.port);
}

namespace {

// ssh_config words rv writes from Slurm and the login's destination: nothing that could end the
// line or start another directive (N13). Host names and addresses: letters, digits, `.`, `_`,
// `-`, `:` (IPv6) and `[]` (a bracketed IPv6 login host); users: letters, digits, `.`, `_`, `-`.
bool config_word(std::string_view s, std::string_view extra)
{
  return !s.empty() && s.size() <= 255 && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || extra.find(c) != std::string_view::npos;
  });
}

} // namespace

Result<std::string> ssh_config_block(const NodeTarget& t, const LoginHop& login)
{
  const auto bad = [](std::string_view what, std::string_view value) {
    return fail(ErrorCode::parse, fmt::format("rv will not write {} {:?} into an ssh config", what, value),
                "it is not a plain host or user name; write the Host block by hand");
  };
  if (!config_word(t.address, ":")) {
    return bad("the node address", t.address);
  }
  if (!config_word(t.node, ":")) {
    return bad("the node name", t.node);
  }
  if (!login.user.empty() && !config_word(login.user, "")) {
    return bad("the user", login.user);
  }
  if (!login.host.empty() && !config_word(proxy_jump(login), ":[]@")) {
    return bad("the login host", proxy_jump(login));
  }
  std::string b = fmt::format("{}\n# request {}, job {} on {} (rv ssh --print-config --install rewrites this block)\n",
                              begin_marker, t.request_id, t.job_id, t.node);
  b += fmt::format("Host rv-{}\n  HostName {}\n", t.request_id, t.address);
  if (!login.user.empty()) {
    b += fmt::format("  User {}\n", login.user);
  }
  if (!login.host.empty()) {
    b += fmt::format("  ProxyJump {}\n", proxy_jump(login));
  }
  b += std::string(end_marker) + "\n";
  return b;
}

Result<std::string> with_managed_block(const std::string& existing, const std::string& block)
{
  auto begin = find_line(existing, begin_marker);
  if (begin == std::string::npos) {
    std::string out = existing;
    if (!out.empty() && out.back() != '\n') {
      out += '\n';
    }
    return out + block;
  }
  auto end = find_line(existing, end_marker, begin);
  if (end == std::string::npos) {
    return fail(ErrorCode::config, "the ssh config has a '# BEGIN rv' line without its '# END rv'",
                "remove the unfinished block by hand, then install again");
  }
  auto after = existing.find('\n', end);
  after = after == std::string::npos ? existing.size() : after + 1;
  return existing.substr(0, begin) + block + existing.substr(after);
}

} // namespace rv::app
