#pragma once
// Quoting for POSIX shells, and the framing that runs many commands in one round trip.

#include "core/process/runner.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rv::proc {

// A shell variable name: [A-Za-z_][A-Za-z0-9_]* (secrets, --env, the job's exports).
bool is_variable_name(std::string_view name);

// Quotes `word` so that a POSIX shell reads it back byte for byte (single quotes; `'` as '\'').
std::string shell_quote(std::string_view word);

// "value" with `"` and `\` backslash-escaped: the double quoting of sbatch directives and of
// ssh option values.
std::string double_quote(std::string_view value);

// Quotes every word of `argv` and joins them with spaces: a command line for `sh -c`.
std::string shell_join(const std::vector<std::string>& argv);

// One word quoted for rsync's own splitter of `-e`/RSYNC_RSH, which is not a shell: it splits at
// spaces and knows '...' and "...", a doubled quote inside standing for itself, and no
// backslashes (rsync's do_cmd, every version since 2.6): `a b` -> `'a b'`, `it's` -> `'it''s'`.
// Any byte string survives, both kinds of quote included.
std::string rsync_quote(std::string_view word);

// A value for OpenSSH's `-o Key=VALUE`: ssh splits the value into words itself (argv_split: "..."
// with \" and \\ inside), so a value with blanks, quotes or backslashes is double-quoted:
// `/a b/kh` -> `"/a b/kh"`. Others are returned as they are.
std::string ssh_option_quote(std::string_view value);

// `argv` as one command line that every login shell (sh, bash, zsh, fish, tcsh) hands to /bin/sh
// unchanged: `exec /bin/sh -c 'eval "$(printf %b "$1")"' rv 'PAYLOAD'`, PAYLOAD being
// `exec <shell_join(argv)>` with every byte other than printable ASCII, and ', \ and !, written
// as a printf %b octal escape (\0ooo). Inside single quotes these words mean the same to all of
// those shells (fish reads only \\ and \' there, tcsh only ! and newline), so the login shell's
// own syntax never touches the command (docs/ssh.md, "Quoting").
std::string login_shell_command(const std::vector<std::string>& argv);

// The same line for a whole POSIX sh script: /bin/sh evals `script` itself (PAYLOAD = `script`).
std::string login_shell_script(std::string_view script);

// Builds one POSIX sh script that runs `cmds` in order and prints each one's exit status,
// stdout and stderr in length-prefixed frames that `parse_batch_output` reads back. A command's
// stdin_data reaches it byte for byte, NUL bytes included (printf %b with octal escapes).
// Consecutive commands marked `concurrent` run at the same time, at most 8 at once; a command
// not marked waits for all before it. The frames always come back in the order of `cmds`.
std::string batch_script(const std::vector<Command>& cmds);

// How a batch travels to a remote shell: the exec line, and what goes on its stdin.
struct BatchExec {
  std::string line;
  std::string input;
};

// The longest exec line a batch's script rides in (the kernel's limit on one argument, which the
// login shell's `-c LINE` is, is 128 KiB).
inline constexpr std::size_t k_batch_line_max = 64 * 1024;

// A batch whose commands carry no stdin_data, and whose line fits k_batch_line_max, rides in the
// exec line (`login_shell_script`): the server gives a session channel no window for stdin until
// its command has started, so a script on stdin costs a round trip more. Every word it holds is an
// argv the login node's `ps` shows anyway while that command runs. Any stdin_data (a job script,
// a file's content: possibly secret) sends the whole script on stdin of `exec /bin/sh -s`.
BatchExec batch_exec(const std::vector<Command>& cmds);

// Splits the output of a `batch_script` run into one Outcome per command.
Result<std::vector<Outcome>> parse_batch_output(std::string_view out, std::size_t expected);

} // namespace rv::proc
