#include "core/ssh/kbdint.hpp"

#include "core/printable.hpp"
#include "core/process/local_runner.hpp"
#include "core/ssh/failures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

namespace rv::proc {
namespace {

std::string lower(std::string_view s)
{
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string env(const char* name)
{
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The controlling terminal, as OpenSSH asks on it (stdin may be a pipe); -1 when there is none.
int open_terminal()
{
  return ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
}

void write_all(int fd, std::string_view text)
{
  while (!text.empty()) {
    auto n = ::write(fd, text.data(), text.size());
    if (n <= 0) {
      return;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Asks on /dev/tty: the round's name and instruction, then each prompt, echoed or not as the
// server said.
class TerminalPrompter final : public SecondFactorPrompter {
public:
  explicit TerminalPrompter(std::string label) : m_label(std::move(label)) {}
  Result<std::vector<std::string>> answer(const KbdintRound& round) override
  {
    const int fd = open_terminal();
    if (fd < 0) {
      return std::unexpected(no_prompter_failure(m_label, round.prompts.empty() ? "" : round.prompts[0].text));
    }
    std::vector<std::string> answers;
    write_all(fd, round_header_text(round));
    for (const auto& prompt : round.prompts) {
      write_all(fd, prompt_text(prompt));
      termios saved{};
      const bool hide = !prompt.echo && ::tcgetattr(fd, &saved) == 0;
      if (hide) {
        termios quiet = saved;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        quiet.c_lflag |= static_cast<tcflag_t>(ECHONL);
        ::tcsetattr(fd, TCSANOW, &quiet); // not FLUSH: a code typed ahead is kept
      }
      std::string line;
      line.reserve(256); // no regrowth leaves a copy of a secret behind in freed memory
      char c = 0;
      bool got_any = false;
      while (::read(fd, &c, 1) == 1) {
        got_any = true;
        if (c == '\n' || c == '\r') {
          break;
        }
        line.push_back(c);
      }
      if (hide) {
        ::tcsetattr(fd, TCSANOW, &saved);
      }
      if (!got_any) {
        ::close(fd);
        return fail(ErrorCode::auth_failed, "no answer to the prompt (end of input)");
      }
      answers.push_back(std::move(line));
    }
    ::close(fd);
    return answers;
  }

private:
  std::string m_label;
};

// OpenSSH's SSH_ASKPASS: one call per prompt, the prompt as the only argument, the answer on its
// stdout (one line).
class AskpassPrompter final : public SecondFactorPrompter {
public:
  explicit AskpassPrompter(std::string program) : m_program(std::move(program)) {}
  Result<std::vector<std::string>> answer(const KbdintRound& round) override
  {
    std::vector<std::string> answers;
    for (const auto& prompt : round.prompts) {
      std::string text = prompt.text;
      if (!round.instruction.empty()) {
        text = round.instruction + (round.instruction.ends_with('\n') ? "" : "\n") + text;
      }
      Command cmd;
      cmd.argv = {m_program, text};
      cmd.timeout = std::chrono::minutes(5);
      LocalRunner local;
      RV_TRY(out, local.run(cmd));
      if (!out.ok()) {
        return fail(ErrorCode::auth_failed,
                    fmt::format("SSH_ASKPASS ({}) gave no answer (exit {})", m_program, out.status()),
                    "check the program, or unset SSH_ASKPASS_REQUIRE to be asked on the terminal");
      }
      auto line = out.out.substr(0, out.out.find('\n'));
      if (line.ends_with('\r')) {
        line.pop_back();
      }
      answers.push_back(std::move(line));
    }
    return answers;
  }

private:
  std::string m_program;
};

class NoPrompter final : public SecondFactorPrompter {
public:
  explicit NoPrompter(std::string label) : m_label(std::move(label)) {}
  Result<std::vector<std::string>> answer(const KbdintRound& round) override
  {
    return std::unexpected(no_prompter_failure(m_label, round.prompts.empty() ? "" : round.prompts[0].text));
  }
  bool can_ask() const override { return false; }

private:
  std::string m_label;
};

} // namespace

std::string round_header_text(const KbdintRound& round)
{
  std::string text;
  for (const auto* line : {&round.name, &round.instruction}) {
    if (!line->empty()) {
      text += printable(*line);
      text += line->ends_with('\n') ? "" : "\n";
    }
  }
  return text;
}

std::string prompt_text(const KbdintPrompt& prompt)
{
  return printable(prompt.text);
}

PromptChannel choose_prompt_channel(std::string_view askpass, std::string_view require, bool has_terminal)
{
  if (!askpass.empty() && (require == "force" || require == "prefer")) {
    return PromptChannel::askpass;
  }
  return has_terminal ? PromptChannel::terminal : PromptChannel::none;
}

std::unique_ptr<SecondFactorPrompter> user_prompter(std::string label)
{
  const int fd = open_terminal();
  const bool tty = fd >= 0;
  if (tty) {
    ::close(fd);
  }
  const auto askpass = env("SSH_ASKPASS");
  switch (choose_prompt_channel(askpass, env("SSH_ASKPASS_REQUIRE"), tty)) {
  case PromptChannel::askpass:
    return std::make_unique<AskpassPrompter>(askpass);
  case PromptChannel::terminal:
    return std::make_unique<TerminalPrompter>(std::move(label));
  case PromptChannel::none:
    break;
  }
  return std::make_unique<NoPrompter>(std::move(label));
}

bool is_password_prompt(std::string_view prompt)
{
  const auto text = lower(prompt);
  if (text.find("password") == std::string::npos) {
    return false;
  }
  for (const char* code : {"one-time", "one time", "otp", "oath", "passcode", "code", "token", "verification"}) {
    if (text.find(code) != std::string::npos) {
      return false;
    }
  }
  return true;
}

Result<std::vector<std::string>> answer_round(const KbdintRound& round, std::optional<std::string>& password,
                                              SecondFactorPrompter& user)
{
  std::vector<std::string> answers(round.prompts.size());
  KbdintRound rest{round.name, round.instruction, {}};
  std::vector<std::size_t> asked;
  for (std::size_t i = 0; i < round.prompts.size(); ++i) {
    const auto& prompt = round.prompts[i];
    if (password && !prompt.echo && is_password_prompt(prompt.text)) {
      answers[i] = std::move(*password);
      password.reset(); // at most once: a second password prompt means it was refused
      continue;
    }
    rest.prompts.push_back(prompt);
    asked.push_back(i);
  }
  if (asked.empty()) {
    return answers;
  }
  RV_TRY(given, user.answer(rest));
  if (given.size() != asked.size()) {
    return fail(ErrorCode::auth_failed, "the second-factor prompter gave the wrong number of answers");
  }
  for (std::size_t k = 0; k < asked.size(); ++k) {
    answers[asked[k]] = std::move(given[k]);
  }
  return answers;
}

Error no_prompter_failure(std::string_view label, std::string_view prompt)
{
  std::string what = "the host asks for a second factor";
  if (!prompt.empty()) {
    auto shown = std::string(prompt);
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == ':')) {
      shown.pop_back();
    }
    what += fmt::format(" ('{}')", shown);
  }
  what += " and there is no terminal to ask it on";
  return ssh_failure(ErrorCode::auth_failed, label, what, {},
                     "run `rv connect` in a terminal and type it there once (later commands use the held "
                     "connection), or set SSH_ASKPASS to a program that prints it and SSH_ASKPASS_REQUIRE=force");
}

} // namespace rv::proc
