#include "core/ssh/kbdint.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace rv;
using namespace rv::proc;

namespace {

// Records every round it is asked and answers each prompt with `code`.
class FakePrompter final : public SecondFactorPrompter {
public:
  explicit FakePrompter(std::string code) : m_code(std::move(code)) {}
  Result<std::vector<std::string>> answer(const KbdintRound& round) override
  {
    asked.push_back(round);
    return std::vector<std::string>(round.prompts.size(), m_code);
  }
  std::vector<KbdintRound> asked;

private:
  std::string m_code;
};

KbdintRound round_of(std::vector<KbdintPrompt> prompts)
{
  return KbdintRound{"", "", std::move(prompts)};
}

} // namespace

TEST_CASE("is_password_prompt: the account's password, not a code's prompt")
{
  CHECK(is_password_prompt("Password: "));
  CHECK(is_password_prompt("rvinit@127.0.0.1's password: "));
  CHECK(is_password_prompt("(rvinit@login1) Password:"));
  CHECK_FALSE(is_password_prompt("One-time password (OATH) for `rvtest': "));
  CHECK_FALSE(is_password_prompt("Passcode or option (1-2): "));
  CHECK_FALSE(is_password_prompt("Verification code: "));
  CHECK_FALSE(is_password_prompt("Enter your OTP password: "));
  CHECK_FALSE(is_password_prompt("Token: "));
}

TEST_CASE("answer_round: the password answers the password prompt once, the code prompt goes to the user")
{
  FakePrompter user("123456");
  std::optional<std::string> password = "hunter2";
  // pam_unix then pam_oath, as two rounds of one keyboard-interactive exchange.
  auto first = answer_round(round_of({{"Password: ", false}}), password, user);
  REQUIRE(first);
  CHECK(*first == std::vector<std::string>{"hunter2"});
  CHECK_FALSE(password.has_value());
  CHECK(user.asked.empty());
  auto second = answer_round(round_of({{"One-time password (OATH) for `rvinit': ", false}}), password, user);
  REQUIRE(second);
  CHECK(*second == std::vector<std::string>{"123456"});
  REQUIRE(user.asked.size() == 1);
  CHECK(user.asked[0].prompts[0].text == "One-time password (OATH) for `rvinit': ");
}

TEST_CASE("answer_round: a second password prompt (the first was refused) is the user's, never the password again")
{
  FakePrompter user("typed");
  std::optional<std::string> password = "hunter2";
  for (int i = 0; i < 24; ++i) { // the old loop answered up to 24 hidden prompts with it
    auto answers = answer_round(round_of({{"Password: ", false}}), password, user);
    REQUIRE(answers);
    CHECK((*answers)[0] == (i == 0 ? "hunter2" : "typed"));
  }
  CHECK(user.asked.size() == 23);
}

TEST_CASE("answer_round: Duo's menu is an echoed prompt for the user, with name and instruction kept")
{
  FakePrompter user("1");
  std::optional<std::string> password;
  KbdintRound duo{"Duo two-factor login",
                  "Duo two-factor login for rvtest\n\n 1. Duo Push to XXX-XXX-1234\n",
                  {{"Passcode or option (1-2): ", true}}};
  auto answers = answer_round(duo, password, user);
  REQUIRE(answers);
  CHECK(*answers == std::vector<std::string>{"1"});
  REQUIRE(user.asked.size() == 1);
  CHECK(user.asked[0].name == "Duo two-factor login");
  CHECK(user.asked[0].instruction.find("Duo Push") != std::string::npos);
  CHECK(user.asked[0].prompts[0].echo);
}

TEST_CASE("answer_round: a round with no prompt asks no one, mixed prompts keep their order")
{
  FakePrompter user("code");
  std::optional<std::string> password = "pw";
  auto none = answer_round(round_of({}), password, user);
  REQUIRE(none);
  CHECK(none->empty());
  CHECK(user.asked.empty());
  auto mixed = answer_round(round_of({{"Verification code: ", false}, {"Password: ", false}}), password, user);
  REQUIRE(mixed);
  CHECK(*mixed == std::vector<std::string>{"code", "pw"});
  REQUIRE(user.asked.size() == 1);
  CHECK(user.asked[0].prompts.size() == 1);
}

TEST_CASE("choose_prompt_channel: OpenSSH's SSH_ASKPASS_REQUIRE convention")
{
  CHECK(choose_prompt_channel("", "", true) == PromptChannel::terminal);
  CHECK(choose_prompt_channel("", "", false) == PromptChannel::none);
  CHECK(choose_prompt_channel("/bin/askpass", "", false) == PromptChannel::none);
  CHECK(choose_prompt_channel("/bin/askpass", "never", true) == PromptChannel::terminal);
  CHECK(choose_prompt_channel("/bin/askpass", "force", false) == PromptChannel::askpass);
  CHECK(choose_prompt_channel("/bin/askpass", "prefer", true) == PromptChannel::askpass);
  CHECK(choose_prompt_channel("", "force", false) == PromptChannel::none);
}

TEST_CASE("no_prompter_failure: exit 254, names the host and the prompt, says how to give it")
{
  auto e = no_prompter_failure("rvtest@127.0.0.1:2223", "One-time password (OATH) for `rvtest': ");
  CHECK(e.code == ErrorCode::auth_failed);
  CHECK(e.message ==
        "ssh rvtest@127.0.0.1:2223: the host asks for a second factor ('One-time password (OATH) for `rvtest'') "
        "and there is no terminal to ask it on");
  CHECK(e.hint.find("rv connect") != std::string::npos);
  CHECK(e.hint.find("SSH_ASKPASS_REQUIRE=force") != std::string::npos);
}

TEST_CASE("the terminal shows a round's name, instruction and prompts with the server's control characters escaped")
{
  // A pam_echo banner that retitles the window, clears the screen and asks for another password
  // (the third security review's S5 reproduction).
  KbdintRound round{
      "\x1b]0;PWNED-TITLE\x07", "\x1b[2J\x1b[HRe-enter your laptop password below", {{"Password\x1b[8m:", false}}};
  const auto header = round_header_text(round);
  CHECK(header.find('\x1b') == std::string::npos);
  CHECK(header.find('\x07') == std::string::npos);
  CHECK(header == "\\x1b]0;PWNED-TITLE\\x07\n\\x1b[2J\\x1b[HRe-enter your laptop password below\n");
  const auto prompt = prompt_text(round.prompts[0]);
  CHECK(prompt == "Password\\x1b[8m:");
  // Plain text, a newline kept, an empty name leaves no blank line.
  KbdintRound plain{"", "Enter the code\nfrom your phone\n", {{"Verification code: ", true}}};
  CHECK(round_header_text(plain) == "Enter the code\nfrom your phone\n");
  CHECK(prompt_text(plain.prompts[0]) == "Verification code: ");
}
