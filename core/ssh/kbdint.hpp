#pragma once
// Second factors, and a key's passphrase: the server's keyboard-interactive prompts (a TOTP code, Duo's "Passcode or
// option (1-2):") answered by the user, on the terminal or through SSH_ASKPASS, after the key was
// accepted. A password, where rv init has one, answers only a password prompt, and only once.

#include "core/result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::proc {

struct KbdintPrompt {
  std::string text;
  bool echo = false; // the answer may be shown as typed
};

// One round of a keyboard-interactive exchange, as the server sent it.
struct KbdintRound {
  std::string name;
  std::string instruction;
  std::vector<KbdintPrompt> prompts;
};

// Answers prompts from the user. Tests use a fake.
class SecondFactorPrompter {
public:
  virtual ~SecondFactorPrompter() = default;
  // One answer per prompt of `round`; auth_failed (254) when no one can answer.
  virtual Result<std::vector<std::string>> answer(const KbdintRound& round) = 0;
  // Whether anyone is there to answer (a terminal or SSH_ASKPASS): a key's passphrase is asked only
  // then (core/ssh/session_auth.cpp); with no one, the key is skipped, not an error.
  virtual bool can_ask() const { return true; }
};

// Where the user's answers come from, by OpenSSH's convention: SSH_ASKPASS when
// SSH_ASKPASS_REQUIRE is `force` or `prefer` (and SSH_ASKPASS is set), else the terminal, else none.
enum class PromptChannel { terminal, askpass, none };
PromptChannel choose_prompt_channel(std::string_view askpass, std::string_view require, bool has_terminal);

// The prompter for this process's environment (SSH_ASKPASS, SSH_ASKPASS_REQUIRE, /dev/tty);
// `label` names the host in the error given when there is none.
std::unique_ptr<SecondFactorPrompter> user_prompter(std::string label);

// A prompt that asks for the account's password ("Password:", "user@host's password:"), not
// for a code ("One-time password", "Passcode", "Verification code").
bool is_password_prompt(std::string_view prompt);

// The answers to one round: a password prompt gets `password` (which is then used up, so it
// answers at most once); every other prompt, and a password prompt once it is used up, is asked
// of `user` in one call. No prompt (a round that only shows text) needs no one.
Result<std::vector<std::string>> answer_round(const KbdintRound& round, std::optional<std::string>& password,
                                              SecondFactorPrompter& user);

// What the terminal shows of a round before its prompts: the name and the instruction, each on a
// line of its own, with the server's control characters escaped (printable(): an escape sequence
// in a PAM banner cannot retitle, clear or rewrite the user's terminal; S5 of the third review).
std::string round_header_text(const KbdintRound& round);
// A prompt as the terminal shows it: escaped the same way.
std::string prompt_text(const KbdintPrompt& prompt);

// The error when the host asks for a second factor and there is neither a terminal nor askpass.
Error no_prompter_failure(std::string_view label, std::string_view prompt);

} // namespace rv::proc
