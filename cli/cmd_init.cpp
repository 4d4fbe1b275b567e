// `rv init`: the guided first run (app/init/init.hpp, docs/init.md).

#include "app/init/init.hpp"
#include "cli/commands.hpp"
#include "cli/task_file.hpp"
#include "cli/terminal_input.hpp"
#include "core/printable.hpp"
#include "core/secure_memory.hpp"
#include "core/ssh/destination.hpp"
#include "core/ssh/runner.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/record_store.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace rv::cli {
namespace {

struct InitFlags {
  std::string user;
  int port = 0;
  bool non_interactive = false;
  bool password_stdin = false;
  bool yes = false;
  std::string host_key_fingerprint;
  std::string scratch;
};

// The terminal: questions on stderr, answers from stdin.
class TerminalPrompter final : public app::Prompter {
public:
  Result<std::string> ask(std::string_view question, const std::string& default_answer, std::string_view) override
  {
    std::fputs(
        printable(fmt::format("{}{}: ", question, default_answer.empty() ? "" : " [" + default_answer + "]")).c_str(),
        stderr);
    std::string line;
    if (!std::getline(std::cin, line)) {
      return fail(ErrorCode::interrupted, "rv init: no answer (end of input)", "run rv init again to resume");
    }
    auto answer = std::string(text::trim(line));
    return answer.empty() ? default_answer : answer;
  }
  Result<bool> confirm(std::string_view question, bool default_yes, std::string_view flag) override
  {
    RV_TRY(answer, ask(fmt::format("{} ({})", question, default_yes ? "Y/n" : "y/N"), "", flag));
    if (answer.empty()) {
      return default_yes;
    }
    return answer == "y" || answer == "Y" || answer == "yes";
  }
  Result<std::string> password(std::string_view prompt, int attempt) override
  {
    auto pw = read_hidden_line(
        fmt::format("{}{} (not shown): ", prompt, attempt > 1 ? fmt::format(", try {}", attempt) : ""));
    if (pw.empty()) {
      return fail(ErrorCode::auth_failed, "no password given", "run rv init again to resume");
    }
    return pw;
  }
  Result<std::string> secret(std::string_view prompt) override
  {
    return read_hidden_line(fmt::format("{} (not shown): ", prompt));
  }
  void say(std::string_view line) override
  {
    std::fputs(printable(fmt::format("rv init: {}\n", line)).c_str(), stderr);
  }
};

// One line of stdin (--password-stdin) read with read(2), byte by byte: no stdio or iostream
// buffer keeps a copy of the password; the line's end ("\n", "\r\n") is dropped.
std::string read_stdin_line()
{
  std::string line;
  line.reserve(256); // on the heap from the start: moving it copies no byte, no regrowth leaves one
  char c = 0;
  while (true) {
    const auto n = ::read(0, &c, 1);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0 || c == '\n') {
      break;
    }
    line.push_back(c);
  }
  c = 0;
  if (line.ends_with('\r')) {
    line.pop_back();
  }
  return line;
}

// --non-interactive: the flags answer everything; a missing answer names its flag.
class FlagPrompter final : public app::Prompter {
public:
  FlagPrompter(std::optional<std::string> password, bool quiet) : m_password(std::move(password)), m_quiet(quiet) {}
  FlagPrompter(const FlagPrompter&) = delete;
  FlagPrompter& operator=(const FlagPrompter&) = delete;
  ~FlagPrompter() override
  {
    if (m_password) {
      wipe(*m_password);
    }
  }
  Result<std::string> ask(std::string_view question, const std::string& default_answer, std::string_view flag) override
  {
    if (!default_answer.empty()) {
      return default_answer;
    }
    return fail(ErrorCode::usage, fmt::format("rv init --non-interactive: no answer for '{}'", question),
                fmt::format("pass {}", flag));
  }
  Result<bool> confirm(std::string_view question, bool, std::string_view flag) override
  {
    return fail(ErrorCode::host_key_unknown, fmt::format("rv init --non-interactive: {}", question),
                fmt::format("pass {} after checking the fingerprint", flag));
  }
  Result<std::string> password(std::string_view, int attempt) override
  {
    if (!m_password || attempt > 1) { // the same password will not do better a second time
      return fail(ErrorCode::auth_failed, "the host does not accept the key yet and no password was given",
                  "pass --password-stdin (or set RV_INIT_PASSWORD) to install the key once");
    }
    return *m_password;
  }
  Result<std::string> secret(std::string_view prompt) override
  {
    return fail(ErrorCode::usage, fmt::format("rv init --non-interactive: cannot ask '{}'", prompt),
                "run rv init in a terminal");
  }
  void say(std::string_view line) override
  {
    if (!m_quiet) {
      std::fputs(printable(fmt::format("rv init: {}\n", line)).c_str(), stderr);
    }
  }

private:
  std::optional<std::string> m_password;
  bool m_quiet;
};

class RealInitWorld final : public app::InitWorld {
public:
  RealInitWorld(std::filesystem::path state_file, std::string config_file)
      : m_state_file(std::move(state_file)), m_config_file(std::move(config_file))
  {}
  std::unique_ptr<proc::SshBootstrap> bootstrap(const proc::SshOptions& o) override
  {
    return std::make_unique<proc::SshBootstrap>(o);
  }
  std::unique_ptr<proc::Runner> runner(const proc::SshOptions& o) override
  {
    return std::make_unique<proc::SshRunner>(o);
  }
  std::unique_ptr<proc::Runner> runner_from(std::unique_ptr<proc::SshBootstrap> session,
                                            const proc::SshOptions& later) override
  {
    return session->into_runner(later);
  }
  std::optional<std::string> find_key(const std::string& ssh_dir) override { return proc::find_default_key(ssh_dir); }
  bool exists(const std::string& path) override
  {
    std::error_code ec; // a dangling link counts: a key is never written through one
    return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
  }
  Result<proc::KeyPair> read_key(const std::string& path) override { return proc::read_key_pair(path); }
  Result<proc::KeyPair> generate_key(const std::string& path, const std::string& comment,
                                     const std::string& passphrase) override
  {
    return proc::generate_ed25519(path, comment, passphrase);
  }
  std::optional<std::string> read_text(const std::string& path) override
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return std::nullopt;
    }
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  Result<void> append_text(const std::string& path, const std::string& text) override
  {
    const auto dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
      std::filesystem::create_directories(dir, ec);
      ::chmod(dir.c_str(), 0700);
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      return fail(ErrorCode::io, fmt::format("cannot write {}: {}", path, std::strerror(errno)),
                  "check the file's permissions, or pass --ssh-config ''");
    }
    std::string_view rest = text;
    while (!rest.empty()) {
      const auto n = ::write(fd, rest.data(), rest.size());
      if (n <= 0) {
        const int e = errno;
        ::close(fd);
        return fail(ErrorCode::io, fmt::format("cannot write {}: {}", path, std::strerror(e)));
      }
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::close(fd) != 0) {
      return fail(ErrorCode::io, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    return {};
  }
  Result<void> remember(const app::InitAnswers& answers) override
  {
    std::error_code ec;
    std::filesystem::create_directories(m_state_file.parent_path(), ec);
    return store::write_file_atomic(m_state_file, app::to_json(answers).dump(2) + "\n");
  }
  Result<void> set_config(const std::string& key, const std::string& value) override
  {
    return write_config_value(m_config_file, key, value);
  }

private:
  std::filesystem::path m_state_file;
  std::string m_config_file;
};

// The answers of an earlier run: its state file, else what the config already says.
app::InitAnswers remembered(const std::filesystem::path& state_file, const Config& config)
{
  std::ifstream in(state_file);
  if (in) {
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded()) {
      return app::init_answers_from_json(j);
    }
  }
  app::InitAnswers a;
  if (auto dest = proc::parse_destination(config.get("host")); dest) {
    a.host = dest->host;
    a.user = dest->user;
    a.port = dest->port;
  }
  a.identity = expand_home(config.get("identity_file"));
  a.account = config.get("account");
  return a;
}

bool given(const Config& config, const char* key)
{
  return config.origin(key) == Origin::flag || config.origin(key) == Origin::environment;
}

Result<int> run_init_command(const InitFlags& flags, Context& ctx)
{
  const auto& config = ctx.config;
  if (flags.password_stdin && !flags.non_interactive) {
    return fail(ErrorCode::usage, "--password-stdin needs --non-interactive (stdin carries the password)",
                "rv init --non-interactive --password-stdin --host HOST ... < password-file");
  }
  if (!flags.non_interactive && !::isatty(0)) {
    return fail(ErrorCode::usage, "rv init asks questions, but stdin is not a terminal",
                "pass --non-interactive with the answers as flags (rv init --help)");
  }
  // A password may be held from here on: no core dump may hold it, and no other process of the
  // user may read it through /proc (N9).
  if (!forbid_core_dumps()) {
    spdlog::debug("rv init: could not turn core dumps off");
  }
  std::optional<std::string> password;
  if (flags.password_stdin) {
    password = read_stdin_line();
  } else if (const char* env = std::getenv("RV_INIT_PASSWORD"); env && flags.non_interactive) {
    password = env;
  }
  scrub_env("RV_INIT_PASSWORD"); // overwritten, then unset: nothing rv starts inherits it

  app::InitOptions o;
  o.host = given(config, "host") ? config.get("host") : "";
  o.user = flags.user;
  o.port = flags.port;
  o.identity = given(config, "identity_file") ? expand_home(config.get("identity_file")) : "";
  o.ssh_config = expand_home(config.get("ssh_config"));
  o.ssh_config_given = given(config, "ssh_config");
  // An earlier init's known_hosts (the config file's) is a fallback, as for every command (N8).
  (config.origin("known_hosts") == Origin::file ? o.known_hosts_fallback : o.known_hosts) =
      expand_home(config.get("known_hosts"));
  const auto home = local_home();
  if (home.empty()) {
    return fail(ErrorCode::config, "rv init needs $HOME (for ~/.ssh and the config)", "set HOME");
  }
  o.ssh_dir = home + "/.ssh";
  RV_TRY(timeout, config.get_seconds("connect_timeout"));
  o.connect_timeout = std::chrono::seconds(timeout);
  RV_TRY(persist, config.get_seconds("connection_persist"));
  o.persist = std::chrono::seconds(persist);
  o.interactive = !flags.non_interactive;
  o.accept_host_key = flags.yes;
  o.host_key_fingerprint = flags.host_key_fingerprint;
  o.account = given(config, "account") ? config.get("account") : "";
  o.scratch = flags.scratch;
  o.remote_root = config.get("remote_root");
  char host_name[256] = {};
  ::gethostname(host_name, sizeof host_name - 1);
  const char* local_user = std::getenv("USER");
  o.key_comment = fmt::format("{}@{} (rv init)", local_user ? local_user : "rv", host_name);

  const auto state_file = std::filesystem::path(ctx.config_file).parent_path() / "init.json";
  RealInitWorld world(state_file, ctx.config_file);
  TerminalPrompter terminal;
  FlagPrompter flagged(password, ctx.global.json || ctx.global.quiet);
  app::Prompter& prompter = o.interactive ? static_cast<app::Prompter&>(terminal) : flagged;
  auto report = app::run_init(o, remembered(state_file, config), prompter, world);
  if (password) {
    wipe(*password);
  }
  if (!report) {
    return std::unexpected(report.error());
  }
  nlohmann::json written = nlohmann::json::object();
  for (const auto& [k, v] : report->config) {
    written[k] = v;
  }
  if (ctx.global.json) {
    print_json({{"steps", report->steps}, {"config_file", ctx.config_file}, {"config", written}});
    return 0;
  }
  for (const auto& step : report->steps) {
    std::string detail;
    for (const char* field : {"destination", "fingerprint", "path", "detail", "account", "cache_root"}) {
      if (step.contains(field) && step[field].is_string() && !step[field].get<std::string>().empty()) {
        detail += fmt::format("{}{}={}", detail.empty() ? "" : " ", field, step[field].get<std::string>());
      }
    }
    std::fputs(printable(fmt::format("  {:<12} {:<10} {}\n", step.value("step", ""), step.value("status", ""), detail))
                   .c_str(),
               stdout);
  }
  std::fputs(printable(fmt::format("config written to {}:\n", ctx.config_file)).c_str(), stdout);
  for (const auto& [k, v] : report->config) {
    std::fputs(printable(fmt::format("  {} = {}\n", k, v.empty() ? "(default)" : v)).c_str(), stdout);
  }
  std::fputs("next: rv exec sinfo, rv up --dry-run, rv config show\n", stdout);
  return 0;
}

} // namespace

void setup_init(CLI::App& app, Context& ctx)
{
  auto flags = std::make_shared<InitFlags>();
  auto* cmd = app.add_subcommand("init", "first run: host, host key, SSH key, Slurm account, scratch, config");
  cmd->footer("Run it again at any time: finished steps are checked and kept, answers are remembered.\n"
              "The target comes from -H/--host ([user@]host[:port] or an ~/.ssh/config alias), the key\n"
              "from -i (used, or generated there), the account from -A. A password is used once to\n"
              "install the key and never stored: with --non-interactive give it on stdin\n"
              "(--password-stdin) or in RV_INIT_PASSWORD, never as an argument. docs/init.md.");
  cmd->add_option("--user", flags->user, "user name on the cluster")->type_name("NAME");
  cmd->add_option("--port", flags->port, "SSH port of the login node")->type_name("PORT")->check(CLI::Range(1, 65535));
  cmd->add_flag("--non-interactive", flags->non_interactive, "ask nothing: every answer comes from a flag");
  cmd->add_flag("--password-stdin", flags->password_stdin, "read the password (first line) from stdin");
  cmd->add_flag("-y,--yes", flags->yes, "accept the host key the server offers (see --host-key-fingerprint)");
  cmd->add_option("--host-key-fingerprint", flags->host_key_fingerprint,
                  "accept only this host key (SHA256:... as ssh-keygen -lf prints it)")
      ->type_name("FINGERPRINT");
  cmd->add_option("--scratch", flags->scratch, "scratch directory for the caches, or 'none' (default: detected)")
      ->type_name("DIR");
  auto task_file = std::make_shared<bool>(false);
  cmd->add_flag("--task-file", *task_file,
                "only write a commented example rv.toml (the run's recipe) in the project; docs/taskfile.md");
  cmd->callback([&ctx, flags, task_file] {
    ctx.action = [&ctx, flags, task_file] {
      return *task_file ? write_example_task_file(ctx) : run_init_command(*flags, ctx);
    };
  });
}

} // namespace rv::cli
