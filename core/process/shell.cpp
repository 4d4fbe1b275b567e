#include "core/process/shell.hpp"

#include "core/checked.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rv::proc {
namespace {

bool is_safe(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == '/' || c == ',' || c == ':' || c == '=' || c == '@' || c == '+' || c == '%';
}

constexpr std::string_view k_frame = "RV-BATCH ";
// Most concurrent commands of one batch at once. Discovery's batch is 13 (9 discovery commands,
// the config stamp, rv's roots, 2 queue reads): with 8, its third sacctmgr began only after the
// first group's slowest (another sacctmgr) ended, and the cold round trip took twice its slowest
// command (0.64 s for 0.35 s). Each is a short query; the probes bound their own concurrency.
constexpr int k_batch_parallel = 16;

// Reads a decimal number at `pos` up to `stop`; advances `pos` past `stop`.
bool read_number(std::string_view text, std::size_t& pos, char stop, long long& value)
{
  auto end = text.find(stop, pos);
  if (end == std::string_view::npos) {
    return false;
  }
  auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + end, value);
  if (ec != std::errc{} || ptr != text.data() + end) {
    return false;
  }
  pos = end + 1;
  return true;
}

// `text` for printf's %b: bytes for which `raw` is false become \0ooo (three octal digits, so a
// following digit is never taken into the escape); the rest are copied.
template <typename Raw>
std::string printf_b_escape(std::string_view text, Raw raw)
{
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (raw(c)) {
      out += c;
    } else {
      out += fmt::format("\\0{:03o}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

} // namespace

bool is_variable_name(std::string_view name)
{
  auto start = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  return !name.empty() && start(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

std::string shell_quote(std::string_view word)
{
  if (!word.empty() && std::all_of(word.begin(), word.end(), is_safe) && word.front() != '=') {
    return std::string(word);
  }
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

std::string shell_join(const std::vector<std::string>& argv)
{
  std::string line;
  for (const auto& word : argv) {
    if (!line.empty()) {
      line += ' ';
    }
    line += shell_quote(word);
  }
  return line;
}

std::string rsync_quote(std::string_view word)
{
  if (!word.empty() && word.find_first_of(" '\"\t\n") == std::string_view::npos) {
    return std::string(word);
  }
  std::string out = "'";
  for (char c : word) {
    out += c;
    if (c == '\'') {
      out += '\'';
    }
  }
  out += '\'';
  return out;
}

std::string double_quote(std::string_view value)
{
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  out += '"';
  return out;
}

std::string ssh_option_quote(std::string_view value)
{
  if (!value.empty() && value.find_first_of(" \t'\"\\#") == std::string_view::npos) {
    return std::string(value);
  }
  return double_quote(value);
}

std::string login_shell_script(std::string_view script)
{
  // Raw: printable ASCII except what a single-quoted word of fish (\\, \') or tcsh (!) treats
  // specially, and the quote itself. Newlines, control bytes and non-ASCII are escaped as well.
  auto neutral = [](char c) { return c >= 0x20 && c <= 0x7e && c != '\'' && c != '\\' && c != '!'; };
  return "exec /bin/sh -c 'eval \"$(printf %b \"$1\")\"' rv '" + printf_b_escape(script, neutral) + "'";
}

std::string login_shell_command(const std::vector<std::string>& argv)
{
  return login_shell_script("exec " + shell_join(argv));
}

BatchExec batch_exec(const std::vector<Command>& cmds)
{
  auto script = batch_script(cmds);
  if (std::none_of(cmds.begin(), cmds.end(), [](const Command& c) { return c.stdin_data.has_value(); })) {
    auto line = login_shell_script(script);
    if (line.size() <= k_batch_line_max) {
      return {std::move(line), {}};
    }
  }
  return {"exec /bin/sh -s", std::move(script)};
}

std::string batch_script(const std::vector<Command>& cmds)
{
  // Each command's output goes to files first, so that interleaving can never corrupt a frame;
  // the frames are then printed with their byte lengths.
  std::string script = "d=$(mktemp -d \"${TMPDIR:-/tmp}/rv-batch.XXXXXX\") || exit 97\n"
                       "trap 'rm -rf \"$d\"' EXIT\n";
  int running = 0; // concurrent commands started since the last wait
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    const auto& cmd = cmds[i];
    std::string line = shell_join(cmd.argv);
    auto secs = std::chrono::ceil<std::chrono::seconds>(cmd.timeout).count();
    if (secs > 0) {
      line =
          fmt::format("if command -v timeout >/dev/null 2>&1; then timeout -k 5 {} {}; else {}; fi", secs, line, line);
    }
    // %b with \ and NUL escaped: a shell word cannot hold a NUL byte, an escape can.
    auto stdin_raw = [](char c) { return c != '\\' && c != '\0'; };
    std::string input = cmd.stdin_data
                            ? fmt::format("printf '%b' {} | ", shell_quote(printf_b_escape(*cmd.stdin_data, stdin_raw)))
                            : std::string();
    std::string redirect_in = cmd.stdin_data ? "" : " </dev/null";
    auto run_line =
        fmt::format("{}( {} ){} >\"$d/{}.o\" 2>\"$d/{}.e\"; echo $? >\"$d/{}.s\"", input, line, redirect_in, i, i, i);
    if (!cmd.concurrent) { // in order: after every earlier command
      script += (running > 0 ? "wait\n" : "") + run_line + "\n";
      running = 0;
      continue;
    }
    if (running == k_batch_parallel) { // bounded: the login node and slurmctld are shared
      script += "wait\n";
      running = 0;
    }
    script += "{ " + run_line + "; } &\n";
    ++running;
  }
  script += running > 0 ? "wait\n" : "";
  script += fmt::format("i=0\nwhile [ $i -lt {} ]; do\n"
                        "  printf '{}%s %s %s %s\\n' $i \"$(cat \"$d/$i.s\")\" "
                        "$(($(wc -c <\"$d/$i.o\"))) $(($(wc -c <\"$d/$i.e\")))\n"
                        "  cat \"$d/$i.o\" \"$d/$i.e\"\n"
                        "  i=$((i+1))\ndone\n",
                        cmds.size(), k_frame);
  return script;
}

Result<std::vector<Outcome>> parse_batch_output(std::string_view out, std::size_t expected)
{
  std::vector<Outcome> outcomes;
  std::size_t pos = 0;
  while (outcomes.size() < expected) {
    if (out.substr(pos, k_frame.size()) != k_frame) {
      return fail(ErrorCode::parse,
                  fmt::format("batch output is cut short after {} of {} commands", outcomes.size(), expected),
                  "the batch runs under /bin/sh on the cluster; run with -v to see what came back");
    }
    pos += k_frame.size();
    long long index = 0, status = 0, out_len = 0, err_len = 0;
    if (!read_number(out, pos, ' ', index) || !read_number(out, pos, ' ', status) ||
        !read_number(out, pos, ' ', out_len) || !read_number(out, pos, '\n', err_len) ||
        index != static_cast<long long>(outcomes.size()) || out_len < 0 || err_len < 0 ||
        !checked_add(out_len, err_len) || static_cast<std::size_t>(out_len + err_len) > out.size() - pos) {
      return fail(ErrorCode::parse, "batch output has a malformed frame header");
    }
    Outcome o;
    o.exit_code = static_cast<int>(status); // as the shell saw it: 128+N after signal N
    o.out = std::string(out.substr(pos, static_cast<std::size_t>(out_len)));
    pos += static_cast<std::size_t>(out_len);
    o.err = std::string(out.substr(pos, static_cast<std::size_t>(err_len)));
    pos += static_cast<std::size_t>(err_len);
    outcomes.push_back(std::move(o));
  }
  return outcomes;
}

} // namespace rv::proc
