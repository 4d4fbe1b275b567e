#include "core/secrets.hpp"

#include "core/config.hpp"
#include "core/process/shell.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/record_store.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>

namespace rv::secrets {
namespace fs = std::filesystem;

namespace {

// Names the job script or the shell itself depends on: a secret must never replace them.
constexpr std::array k_reserved = {
    "PATH", "HOME", "USER",     "LOGNAME",    "SHELL",           "PWD",    "OLDPWD",
    "IFS",  "ENV",  "BASH_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "TMPDIR", "CUDA_VISIBLE_DEVICES"};

std::unexpected<Error> line_error(int line, const std::string& what)
{
  return fail(ErrorCode::usage, fmt::format(".env line {}: {}", line, what),
              "write NAME=value, NAME='value' or NAME=\"value\", one per line");
}

} // namespace

Result<void> validate_name(std::string_view name)
{
  const std::string n(name);
  if (!proc::is_variable_name(name)) {
    return fail(ErrorCode::usage, fmt::format("'{}' is not a variable name", n),
                "use letters, digits and _, not starting with a digit (e.g. HF_TOKEN)");
  }
  if (name == k_webhook_secret) {
    return {}; // rv's own secret: kept in the store, never exported to a job (docs/notifications.md)
  }
  if (name.starts_with("SLURM_") || name.starts_with("RV_")) {
    return fail(ErrorCode::usage, fmt::format("'{}' is reserved: SLURM_* and RV_* belong to Slurm and rv", n),
                "choose another name");
  }
  if (std::find(k_reserved.begin(), k_reserved.end(), name) != k_reserved.end()) {
    return fail(ErrorCode::usage, fmt::format("'{}' is reserved: the job's shell depends on it", n),
                fmt::format("it is no secret: pass it to one job with `rv run --env {}=VALUE`", n));
  }
  return {};
}

Result<std::vector<Var>> parse_dotenv(std::string_view text)
{
  std::vector<Var> vars;
  std::map<std::string, std::size_t> index;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    auto eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    line = text::trim(line);
    if (line.empty() || line.front() == '#') {
      continue;
    }
    if (line.starts_with("export ") || line.starts_with("export\t")) {
      line = text::trim(line.substr(7));
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      return line_error(line_no, fmt::format("no '=' in '{}'", line.substr(0, 40)));
    }
    const std::string name(text::trim(line.substr(0, eq)));
    if (auto v = validate_name(name); !v) {
      return line_error(line_no, v.error().message);
    }
    std::string_view rest = text::trim(line.substr(eq + 1));
    std::string value;
    const int start_line = line_no;
    if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
      const char quote = rest.front();
      // The value runs to the matching quote, possibly over several lines.
      std::size_t i = static_cast<std::size_t>(rest.data() - text.data()) + 1;
      bool closed = false;
      for (; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\n') {
          ++line_no;
        }
        if (c == quote) {
          closed = true;
          break;
        }
        if (quote == '"' && c == '\\' && i + 1 < text.size()) {
          char n = text[++i];
          switch (n) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case 'r':
            value += '\r';
            break;
          case '"':
          case '\\':
          case '$':
          case '`':
            value += n;
            break;
          case '\n':
            ++line_no;
            break; // a line continuation
          default:
            value += '\\';
            value += n;
            break;
          }
          continue;
        }
        value += c;
      }
      if (!closed) {
        return line_error(start_line, fmt::format("the {} quote of {} is never closed", quote, name));
      }
      // After the closing quote: only blanks or a comment.
      auto after_end = text.find('\n', i);
      std::string_view after = text::trim(
          text.substr(i + 1, after_end == std::string_view::npos ? std::string_view::npos : after_end - i - 1));
      if (!after.empty() && after.front() != '#') {
        return line_error(line_no, fmt::format("unexpected '{}' after the quoted value of {}", after, name));
      }
      pos = after_end == std::string_view::npos ? text.size() : after_end + 1;
    } else {
      auto comment = rest.find(" #");
      if (comment == std::string_view::npos) {
        comment = rest.find("\t#");
      }
      value = std::string(text::trim(rest.substr(0, comment)));
    }
    if (auto it = index.find(name); it != index.end()) {
      vars[it->second].value = value; // the last one wins, as in a shell
    } else {
      index[name] = vars.size();
      vars.push_back({name, value});
    }
  }
  return vars;
}

std::string mask(std::string_view value)
{
  const auto chars = fmt::format("{} char{}", value.size(), value.size() == 1 ? "" : "s");
  if (value.size() < 16) {
    return fmt::format("**** ({})", chars);
  }
  return fmt::format("{}**** ({})", value.substr(0, 4), chars);
}

std::string env_script(const std::vector<Var>& vars)
{
  std::string out = "# rv secrets (rv env); sourced by the job, never printed\n";
  for (const auto& v : vars) {
    out += fmt::format("export {}={}\n", v.name, proc::shell_quote(v.value));
  }
  return out;
}

Store::Store(fs::path path) : m_path(std::move(path)) {}

fs::path Store::default_path()
{
  return fs::path(Config::default_path()).parent_path() / "secrets.json";
}

Result<std::vector<Var>> Store::load() const
{
  struct stat st {};
  if (::stat(m_path.c_str(), &st) != 0) {
    return std::vector<Var>{};
  }
  if ((st.st_mode & 077) != 0) {
    return fail(ErrorCode::config,
                fmt::format("{} is readable by other users (mode {:o})", m_path.string(), st.st_mode & 0777),
                fmt::format("chmod 600 {}", proc::shell_quote(m_path.string())));
  }
  std::ifstream in(m_path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) {
    return fail(ErrorCode::io, fmt::format("cannot read {}", m_path.string()));
  }
  auto parsed = store::parse_lossless(ss.str());
  auto doc = parsed ? std::move(*parsed) : nlohmann::json();
  if (!doc.is_object() || !doc.contains("vars") || !doc["vars"].is_object()) {
    return fail(ErrorCode::config, fmt::format("{} is not an rv secrets file", m_path.string()),
                "fix or remove it; `rv env import` can fill a new one");
  }
  std::vector<Var> vars;
  for (const auto& [name, value] : doc["vars"].items()) {
    if (!value.is_string()) {
      return fail(ErrorCode::config, fmt::format("{}: the value of {} is not a string", m_path.string(), name));
    }
    vars.push_back({name, value.get<std::string>()});
  }
  return vars; // json objects iterate in key order
}

Result<void> Store::modify(const std::function<Result<void>(std::vector<Var>&)>& change)
{
  std::error_code ec;
  fs::create_directories(m_path.parent_path(), ec);
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", m_path.parent_path().string(), ec.message()));
  }
  auto lock_path = m_path;
  lock_path += ".lock";
  RV_TRY(lock, store::FileLock::acquire(lock_path));
  RV_TRY(vars, load());
  RV_TRY_VOID(change(vars));
  nlohmann::json doc = {{"version", 1}, {"vars", nlohmann::json::object()}};
  for (const auto& v : vars) {
    doc["vars"][v.name] = v.value;
  }
  RV_TRY(text, store::dump_lossless(doc)); // a binary value is kept byte for byte
  return store::write_file_atomic(m_path, text);
}

Result<void> Store::set(const std::vector<Var>& vars)
{
  for (const auto& v : vars) {
    RV_TRY_VOID(validate_name(v.name));
  }
  return modify([&](std::vector<Var>& current) -> Result<void> {
    for (const auto& v : vars) {
      auto it = std::find_if(current.begin(), current.end(), [&](const Var& c) { return c.name == v.name; });
      if (it != current.end()) {
        it->value = v.value;
      } else {
        current.push_back(v);
      }
    }
    return {};
  });
}

Result<void> Store::remove(const std::vector<std::string>& names)
{
  return modify([&](std::vector<Var>& current) -> Result<void> {
    std::vector<std::string> known;
    for (const auto& c : current) {
      known.push_back(c.name);
    }
    for (const auto& n : names) {
      if (std::find(known.begin(), known.end(), n) == known.end()) {
        // All or nothing: say so, and which names were kept (#24 item 12: it was silent).
        std::vector<std::string> kept;
        for (const auto& other : names) {
          if (other != n && std::find(known.begin(), known.end(), other) != known.end()) {
            kept.push_back(other);
          }
        }
        auto guess = did_you_mean(n, known);
        return fail(ErrorCode::usage,
                    fmt::format("no secret named {}, so nothing was removed{}", n,
                                kept.empty() ? "" : fmt::format(" ({} kept)", fmt::join(kept, ", "))),
                    guess.empty() ? "`rv env list` shows the names" : fmt::format("did you mean {}?", guess));
      }
    }
    std::erase_if(current, [&](const Var& c) { return std::find(names.begin(), names.end(), c.name) != names.end(); });
    return {};
  });
}

} // namespace rv::secrets
