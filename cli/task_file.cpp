#include "cli/task_file.hpp"

#include "cli/study_flags.hpp"
#include "core/config.hpp"
#include "core/duration.hpp"
#include "core/printable.hpp"
#include "core/process/shell.hpp"
#include "core/text.hpp"
#include "sync/project.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#define TOML_HEADER_ONLY 1 // the static release build links no libtomlplusplus.so
#define TOML_EXCEPTIONS 0  // errors come back as values: one `file:line:` message each
#include <toml++/toml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

namespace rv::cli {
namespace {

const std::vector<std::string> k_top_keys = {"run",   "setup",      "outputs", "resources",    "env",   "array",
                                             "sweep", "sweep_file", "retries", "retry_failed", "prefer"};
const std::vector<std::string> k_resource_keys = {"gpus", "gpu_types", "time", "nodes", "mem", "checkpoint", "hosts"};
const std::vector<std::string> k_env_keys = {"secrets", "vars"};

Error at(const std::string& path, const toml::source_region& where, const std::string& what, std::string hint = {})
{
  return Error{ErrorCode::usage, fmt::format("{}:{}: {}", path, where.begin.line, what), std::move(hint)};
}

const char* type_name(const toml::node& n)
{
  switch (n.type()) {
  case toml::node_type::string:
    return "a string";
  case toml::node_type::integer:
    return "an integer";
  case toml::node_type::floating_point:
    return "a number";
  case toml::node_type::boolean:
    return "a boolean";
  case toml::node_type::array:
    return "a list";
  case toml::node_type::table:
    return "a table";
  case toml::node_type::date:
  case toml::node_type::time:
  case toml::node_type::date_time:
    return "a date or time";
  default:
    return "nothing";
  }
}

// Reads one table's keys: an unknown one is an error naming the line and the closest known key.
class Reader {
public:
  Reader(std::string path) : m_path(std::move(path)) {}

  Result<void> known(const toml::table& t, const std::vector<std::string>& keys, const std::string& where)
  {
    for (auto&& [k, v] : t) {
      const std::string key(k.str());
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        continue;
      }
      std::string hint;
      if (auto guess = did_you_mean(key, keys); !guess.empty()) {
        hint = fmt::format("did you mean '{}'? ", guess);
      }
      hint += fmt::format("keys {}: {}", where.empty() ? "at the top" : "in [" + where + "]", text::join(keys, ", "));
      const auto& region = k.source().begin.line ? k.source() : v.source();
      return std::unexpected(
          at(m_path, region, fmt::format("unknown key '{}'{}", key, where.empty() ? "" : " in [" + where + "]"), hint));
    }
    return {};
  }

  Error wrong(const toml::node& n, const std::string& key, const char* want) const
  {
    return at(m_path, n.source(), fmt::format("{} must be {}, not {}", key, want, type_name(n)));
  }

  Result<std::string> string(const toml::node& n, const std::string& key) const
  {
    if (!n.is_string()) {
      return std::unexpected(wrong(n, key, "a string"));
    }
    return std::string(*n.value<std::string_view>());
  }

  Result<int> positive(const toml::node& n, const std::string& key) const
  {
    if (!n.is_integer()) {
      return std::unexpected(wrong(n, key, "a whole number"));
    }
    const auto v = *n.value<std::int64_t>();
    if (v < 1 || v > 1'000'000) {
      return std::unexpected(at(m_path, n.source(), fmt::format("{} must be at least 1, not {}", key, v)));
    }
    return static_cast<int>(v);
  }

  // A list of strings; a single string is a list of one when `one_ok`.
  Result<std::vector<std::string>> strings(const toml::node& n, const std::string& key, bool one_ok) const
  {
    std::vector<std::string> out;
    if (one_ok && n.is_string()) {
      out.emplace_back(*n.value<std::string_view>());
      return out;
    }
    const auto* a = n.as_array();
    if (a == nullptr) {
      return std::unexpected(wrong(n, key, one_ok ? "a string or a list of strings" : "a list of strings"));
    }
    for (const auto& e : *a) {
      if (!e.is_string()) {
        return std::unexpected(at(m_path, e.source().begin.line ? e.source() : n.source(),
                                  fmt::format("{} must list strings, and one item is {}", key, type_name(e))));
      }
      out.emplace_back(*e.value<std::string_view>());
    }
    return out;
  }

  // `run` and `setup`: a string (a shell command line) or a list of words (an argv).
  Result<std::vector<std::string>> command(const toml::node& n, const std::string& key) const
  {
    RV_TRY(words, strings(n, key, true));
    if (words.empty() || (words.size() == 1 && text::trim(words.front()).empty())) {
      return std::unexpected(
          at(m_path, n.source(), fmt::format("{} is empty", key),
             "a command line (\"python train.py\") or a list of words ([\"python\", \"train.py\"])"));
    }
    return words;
  }

  // A flag's own check of the key's value (study.hpp's parsers): its message and hint, at the
  // value's line.
  template <typename T>
  Result<void> as_flag(const toml::node& n, const Result<T>& checked) const
  {
    if (!checked) {
      return std::unexpected(at(m_path, n.source(), checked.error().message, checked.error().hint));
    }
    return {};
  }

  const std::string& path() const { return m_path; }

private:
  std::string m_path;
};

Result<void> read_resources(Reader& r, const toml::table& t, TaskFile& f)
{
  RV_TRY_VOID(r.known(t, k_resource_keys, "resources"));
  for (auto&& [k, v] : t) {
    const std::string key(k.str());
    if (key == "gpus") {
      RV_TRY(n, r.positive(v, key));
      f.gpus = n;
    } else if (key == "nodes") {
      RV_TRY(n, r.positive(v, key));
      f.nodes = n;
    } else if (key == "gpu_types") {
      RV_TRY(types, r.strings(v, key, true));
      if (types.empty()) {
        return std::unexpected(at(r.path(), v.source(), "gpu_types is empty", "leave it out for any type"));
      }
      f.gpu_types = std::move(types);
    } else if (key == "hosts") {
      RV_TRY(hosts, r.strings(v, key, true));
      if (hosts.empty()) {
        return std::unexpected(at(r.path(), v.source(), "hosts is empty", "leave it out for the config's host"));
      }
      f.hosts = std::move(hosts);
    } else if (key == "time") {
      // A string (30m, 2h, 1-12:00:00) or a bare number of minutes, as --time takes.
      std::string text;
      if (v.is_integer()) {
        text = std::to_string(*v.value<std::int64_t>());
      } else {
        RV_TRY(s, r.string(v, key));
        text = std::move(s);
      }
      if (auto d = parse_duration(text); !d) {
        return std::unexpected(at(r.path(), v.source(), fmt::format("time '{}': {}", text, d.error().message),
                                  "e.g. \"30m\", \"2h\", \"1h30m\", \"1-12:00:00\""));
      }
      f.time = std::move(text);
    } else if (key == "mem") {
      RV_TRY(s, r.string(v, key));
      if (auto mb = parse_memory_mb(s); !mb) {
        return std::unexpected(
            at(r.path(), v.source(), fmt::format("mem '{}': {}", s, mb.error().message), "e.g. \"64G\" or \"512M\""));
      }
      f.mem = std::move(s);
    } else if (key == "checkpoint") {
      if (!v.is_boolean()) {
        return std::unexpected(r.wrong(v, key, "true or false"));
      }
      f.checkpoint = *v.value<bool>();
    }
  }
  return {};
}

Result<void> read_env(Reader& r, const toml::table& t, TaskFile& f)
{
  RV_TRY_VOID(r.known(t, k_env_keys, "env"));
  for (auto&& [k, v] : t) {
    const std::string key(k.str());
    if (key == "secrets") {
      RV_TRY(names, r.strings(v, key, false));
      for (const auto& n : names) {
        if (!proc::is_variable_name(n)) {
          return std::unexpected(at(r.path(), v.source(), fmt::format("secrets: '{}' is not a variable name", n),
                                    "names of secrets set with `rv env set NAME`"));
        }
      }
      f.secrets = std::move(names);
    } else if (key == "vars") {
      const auto* vars = v.as_table();
      if (vars == nullptr) {
        return std::unexpected(r.wrong(v, key, "a table (vars = { NAME = \"value\" })"));
      }
      for (auto&& [name, value] : *vars) {
        const std::string n(name.str());
        if (!proc::is_variable_name(n)) {
          return std::unexpected(at(r.path(), name.source().begin.line ? name.source() : value.source(),
                                    fmt::format("vars: '{}' is not a variable name", n),
                                    "letters, digits and _, not starting with a digit"));
        }
        // Numbers and booleans are written as TOML writes them; anything else is a mistake.
        std::string text;
        if (value.is_string()) {
          text = *value.value<std::string>();
        } else if (value.is_integer()) {
          text = std::to_string(*value.value<std::int64_t>());
        } else if (value.is_boolean()) {
          text = *value.value<bool>() ? "true" : "false";
        } else {
          return std::unexpected(r.wrong(value, "vars." + n, "a string, a whole number or a boolean"));
        }
        f.vars.emplace_back(n, std::move(text));
      }
    }
  }
  return {};
}

// One value of a [sweep] list as --sweep carries it: app::study::param_text's rendering (as a
// --sweep-file's value), no comma (--sweep splits at it).
Result<std::string> sweep_value(const Reader& r, const toml::node& e, const toml::node& list, const std::string& name)
{
  const auto& where = e.source().begin.line ? e.source() : list.source();
  nlohmann::json j;
  if (e.is_string()) {
    j = *e.value<std::string>();
  } else if (e.is_integer()) {
    j = *e.value<std::int64_t>();
  } else if (e.is_floating_point()) {
    const double d = *e.value<double>();
    if (!std::isfinite(d)) {
      return std::unexpected(at(r.path(), where, fmt::format("sweep.{}: {} is not a finite number", name, d)));
    }
    j = d;
  } else if (e.is_boolean()) {
    j = *e.value<bool>();
  }
  auto text = j.is_null() ? std::nullopt : app::study::param_text(j);
  if (!text) {
    return std::unexpected(
        at(r.path(), where,
           fmt::format("sweep.{} must list strings, numbers or booleans, and one item is {}", name, type_name(e))));
  }
  if (text->find(',') != std::string::npos) {
    return std::unexpected(at(
        r.path(), where, fmt::format("sweep.{}: the value '{}' holds a comma, which --sweep cannot carry", name, *text),
        "put values with commas in a sweep_file (a JSON list of objects, docs/studies.md)"));
  }
  return *text;
}

// [sweep]: each key one axis, as `--sweep NAME=v1,v2` carries it, checked by --sweep's parser; in
// the order the file writes them (toml++ keeps a table's keys sorted), so that the first key
// varies slowest, as the first --sweep does.
Result<std::vector<std::string>> read_sweep(const Reader& r, const toml::table& t)
{
  std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::string>> axes;
  for (auto&& [k, v] : t) {
    const std::string name(k.str());
    std::vector<const toml::node*> items;
    if (const auto* a = v.as_array()) {
      for (const auto& e : *a) {
        items.push_back(&e);
      }
    } else {
      items.push_back(&v); // one value: an axis of one, as --sweep seed=1
    }
    if (items.empty()) {
      return std::unexpected(at(r.path(), v.source(), fmt::format("sweep.{} has no values", name),
                                fmt::format("a list of values: {} = [1, 2, 3]", name)));
    }
    std::vector<std::string> values;
    for (const auto* e : items) {
      RV_TRY(value, sweep_value(r, *e, v, name));
      values.push_back(std::move(value));
    }
    const std::string flag = name + "=" + text::join(values, ",");
    const auto axis = app::study::parse_sweep(flag);
    RV_TRY_VOID(r.as_flag(v, axis));
    if (axis->name != name || axis->values != values) { // a name with '=' in it
      return std::unexpected(at(r.path(), v.source(), fmt::format("sweep: '{}' is not a parameter name", name),
                                "letters, digits and _, as in --sweep NAME=v1,v2"));
    }
    const auto& pos = (k.source().begin.line ? k.source() : v.source()).begin;
    axes.emplace_back(std::make_pair(pos.line, pos.column), flag);
  }
  std::stable_sort(axes.begin(), axes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& a : axes) {
    out.push_back(std::move(a.second));
  }
  return out;
}

// The study keys at the top: array, sweep_file, retries, retry_failed, prefer; [sweep].
Result<void> read_study_key(const Reader& r, const std::string& key, const toml::node& v, TaskFile& f)
{
  if (key == "array") {
    RV_TRY(spec, r.string(v, key));
    RV_TRY_VOID(r.as_flag(v, app::study::parse_array_spec(spec)));
    f.array = std::move(spec);
  } else if (key == "sweep") {
    const auto* t = v.as_table();
    if (t == nullptr) {
      return std::unexpected(r.wrong(v, key, "a table ([sweep], NAME = [v1, v2])"));
    }
    RV_TRY(sweeps, read_sweep(r, *t));
    f.sweeps = std::move(sweeps);
  } else if (key == "sweep_file") {
    RV_TRY(path, r.string(v, key));
    if (text::trim(path).empty()) {
      return std::unexpected(
          at(r.path(), v.source(), "sweep_file is empty", "a JSON file's path, relative to the task file"));
    }
    f.sweep_file = std::move(path);
    f.sweep_file_line = static_cast<int>(v.source().begin.line);
  } else if (key == "retries") {
    if (!v.is_integer()) {
      return std::unexpected(r.wrong(v, key, "a whole number"));
    }
    const auto n = static_cast<int>(std::clamp<std::int64_t>(*v.value<std::int64_t>(), INT_MIN, INT_MAX));
    RV_TRY_VOID(r.as_flag(v, app::study::check_retries(n)));
    f.retries = n;
  } else if (key == "retry_failed") {
    if (!v.is_boolean()) {
      return std::unexpected(r.wrong(v, key, "true or false"));
    }
    f.retry_failed = *v.value<bool>();
  } else if (key == "prefer") {
    RV_TRY(word, r.string(v, key));
    RV_TRY_VOID(r.as_flag(v, app::study::parse_prefer(word)));
    f.prefer = std::move(word);
  }
  return {};
}

} // namespace

Result<TaskFile> parse_task_file(std::string_view text, const std::string& path)
{
  auto parsed = toml::parse(text, std::string_view(path));
  if (!parsed) {
    const auto& e = parsed.error();
    return fail(ErrorCode::usage,
                fmt::format("{}:{}: not valid TOML: {}", path, e.source().begin.line, e.description()),
                "the file's shape: docs/taskfile.md");
  }
  const toml::table& doc = parsed.table();
  Reader r(path);
  TaskFile f;
  f.path = path;
  RV_TRY_VOID(r.known(doc, k_top_keys, ""));
  for (auto&& [k, v] : doc) {
    const std::string key(k.str());
    if (key == "run") {
      RV_TRY(words, r.command(v, key));
      f.run = std::move(words);
    } else if (key == "setup") {
      RV_TRY(words, r.command(v, key));
      f.setup = words.size() == 1 ? words.front() : proc::shell_join(words);
    } else if (key == "outputs") {
      RV_TRY(outs, r.strings(v, key, true));
      f.outputs = std::move(outs);
    } else if (key == "resources" || key == "env") {
      const auto* t = v.as_table();
      if (t == nullptr) {
        return std::unexpected(r.wrong(v, key, fmt::format("a table ([{}])", key).c_str()));
      }
      if (key == "resources") {
        RV_TRY_VOID(read_resources(r, *t, f));
      } else {
        RV_TRY_VOID(read_env(r, *t, f));
      }
    } else {
      RV_TRY_VOID(read_study_key(r, key, v, f));
    }
  }
  if (f.run.empty()) {
    return fail(ErrorCode::usage, fmt::format("{}:1: no `run`: the task file must say what to run", path),
                "e.g. run = \"python train.py\" at the top of the file (docs/taskfile.md)");
  }
  return f;
}

GivenFlags given_flags(const CLI::App& cmd)
{
  GivenFlags given;
  for (const auto* opt : cmd.get_options()) {
    if (opt->count() > 0) {
      for (const auto& n : opt->get_lnames()) {
        given.insert(n);
      }
    }
  }
  return given;
}

TaskApplied apply_task_file(const TaskFile& file, JobFlags& flags, app::study::StudyFlags& study,
                            const GivenFlags& given)
{
  auto unset = [&](const char* name) { return !given.contains(name); };
  auto& plan = flags.plan;
  if (file.gpus && unset("gpu")) {
    plan.gpus = *file.gpus;
  }
  if (file.gpu_types && unset("type")) {
    plan.type = text::join(*file.gpu_types, ",");
  }
  if (file.time && unset("time")) {
    plan.time = *file.time;
  }
  if (file.nodes && unset("nodes") && unset("single-node")) {
    plan.nodes = *file.nodes;
  }
  if (file.mem && unset("mem")) {
    plan.mem = *file.mem;
  }
  if (file.checkpoint && unset("checkpoint") && unset("no-checkpoint")) {
    plan.checkpoint = *file.checkpoint;
    plan.no_checkpoint = !*file.checkpoint;
  }
  if (file.outputs && unset("output")) {
    flags.smart.outputs = *file.outputs;
  }
  if (!file.setup.empty() && unset("setup")) {
    flags.smart.setup = file.setup;
  }
  if (file.secrets && unset("secret")) {
    flags.secrets = *file.secrets;
  }
  // [env] vars first, so that --env KEY=... (exported after them) wins for its KEY; a file's var
  // that --env names is left out altogether.
  std::vector<std::string> vars;
  for (const auto& [name, value] : file.vars) {
    const bool overridden = std::any_of(flags.env.begin(), flags.env.end(),
                                        [&](const std::string& w) { return w.starts_with(name + "="); });
    if (!overridden) {
      vars.push_back(name + "=" + value);
    }
  }
  flags.env.insert(flags.env.begin(), vars.begin(), vars.end());
  TaskApplied out;
  out.command = file.run;
  if (file.hosts && unset("host")) {
    out.hosts = *file.hosts;
  }
  // The study: --sweep and --sweep-file are two forms of one thing, and either replaces the file's.
  if (file.array && unset("array")) {
    study.array = *file.array;
    out.study = true;
  }
  if (unset("sweep") && unset("sweep-file")) {
    if (file.sweeps) {
      study.sweeps = *file.sweeps;
      out.study = true;
    }
    if (file.sweep_file) {
      namespace fs = std::filesystem;
      const fs::path p(*file.sweep_file);
      study.sweep_file = p.is_absolute() ? p.generic_string()
                                         : (fs::path(file.path).parent_path() / p).lexically_normal().generic_string();
      study.sweep_file_text.clear();
      out.study = out.sweep_file = true;
    }
  }
  if (file.retries && unset("retries")) {
    study.retries = *file.retries;
  }
  if (file.retry_failed && unset("retry-failed") && unset("no-retry-failed")) {
    study.retry_failed = *file.retry_failed;
  }
  if (file.prefer && unset("prefer")) {
    study.prefer = *file.prefer;
  }
  return out;
}

Result<std::optional<std::filesystem::path>> task_file_of(const std::vector<std::string>& words,
                                                          const std::filesystem::path& cwd)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  if (words.empty()) {
    if (auto root = sync::find_project_root(cwd)) {
      if (fs::is_regular_file(*root / "rv.toml", ec)) {
        return std::optional<fs::path>(*root / "rv.toml");
      }
    }
    return std::optional<fs::path>();
  }
  const auto& first = words.front();
  if (!first.ends_with(".toml")) {
    return std::optional<fs::path>();
  }
  const fs::path p = fs::path(first).is_absolute() ? fs::path(first) : cwd / first;
  if (!fs::is_regular_file(p, ec)) {
    return std::optional<fs::path>(); // not a file here: a command after all (a remote path, say)
  }
  if (words.size() > 1) {
    return fail(
        ErrorCode::usage,
        fmt::format("{} is a task file, and a command follows it ({}): give one or the other", first, words[1]),
        fmt::format("the file's `run` is the command; flags before it override its keys (rv run --gpu 2 {})", first));
  }
  return std::optional<fs::path>(p);
}

void add_task_flags(CLI::App* cmd, JobFlags& flags)
{
  cmd->add_option("--setup", flags.smart.setup,
                  "shell line run in the job before the command, once per content of the project and the line "
                  "(a task file's `setup`; docs/taskfile.md)")
      ->type_name("LINE");
  cmd->add_option_function<std::vector<std::string>>(
         "--secret", [&flags](const std::vector<std::string>& names) { flags.secrets = names; },
         "give the job only this `rv env` secret (repeat for more; each must be set): a task file's [env] secrets")
      ->type_name("NAME")
      ->allow_extra_args(false);
}

Result<RunCommand> command_or_task_file(const std::vector<std::string>& words, JobFlags& flags,
                                        app::study::StudyFlags& study, const CLI::App& cmd, Context& ctx)
{
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  RV_TRY(path, task_file_of(words, cwd));
  if (!path) {
    if (words.empty()) {
      return fail(ErrorCode::usage, "rv run needs a command (or a task file: rv.toml in the project, or FILE.toml)",
                  "rv run [options] python train.py --lr 3e-4; rv init --task-file writes an example rv.toml");
    }
    if (flags.secrets) {
      for (const auto& n : *flags.secrets) {
        if (!proc::is_variable_name(n)) {
          return fail(ErrorCode::usage, fmt::format("--secret '{}' is not a variable name", n),
                      "the name of a secret set with `rv env set NAME`");
        }
      }
    }
    return RunCommand{words, {}};
  }
  // The file as named on the command line (relative stays relative), for its messages.
  const std::string shown = words.empty() ? path->lexically_relative(cwd).generic_string() : words.front();
  std::ifstream in(*path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  if (!in && !in.eof()) {
    return fail(ErrorCode::io, fmt::format("cannot read the task file {}", shown));
  }
  const std::string text = content.str();
  RV_TRY(file, parse_task_file(text, shown));
  GivenFlags given = given_flags(cmd);
  if (!ctx.global.hosts.empty()) {
    given.insert("host");
  }
  auto applied = apply_task_file(file, flags, study, given);
  if (applied.sweep_file) { // read here, so that its mistakes name the key's line
    if (auto read = read_sweep_file(study); !read) {
      auto e = read.error();
      e.message = fmt::format("{}:{}: {}", shown, file.sweep_file_line, e.message);
      return std::unexpected(e);
    }
  }
  RV_TRY_VOID(set_host_flags(ctx.config, applied.hosts));
  spdlog::info("task file {}: {}", shown, text::join(applied.command, " "));
  return RunCommand{applied.command, applied.study ? shown : std::string()};
}

const std::string& example_task_file()
{
  static const std::string text =
      R"toml(# rv.toml: this project's run recipe. `rv run` with no command runs it; flags override
# any key (rv run --gpu 4 --time 2h). Every key: docs/taskfile.md.

# The command: a string run by the shell, or a list of words (["python", "train.py"]).
run = "python train.py"

# Run once per snapshot of the project, before the command, in the job (cached by content: it
# runs again only when this line or the project's files change).
# setup = "pip install -e ."

# What `rv sync pull` fetches after the job (paths relative to where the command runs).
# outputs = ["results/"]

# A study (docs/studies.md): `run` once per task, {task} in it the task's id, {NAME} a [sweep]
# value. An array of ids, or a sweep (the two together only as array = "%K", a cap):
# array = "0-15%4"               # ids 0..15, at most 4 at once: Slurm's syntax (--array)
# sweep_file = "grid.json"       # or a JSON list of objects, relative to this file (--sweep-file)
# retries = 1                    # a task whose worker died runs again up to this many times
# retry_failed = false           # true: also a task that failed by its own exit status
# prefer = "time"                # the pool: "time" buys a shorter study with pricier GPUs, "cost" keeps to the cheapest
# [sweep]                        # each key's values, the cartesian product; the first key varies slowest
# seed = [1, 2, 3]
# model = ["small", "base"]

[resources]
gpus = 1
time = "1h"
# gpu_types = ["a100", "h100"]   # any of these (default: any type)
# nodes = 1                      # exactly this many nodes (default: rv chooses)
# mem = "64G"                    # per node (default: the GPUs' share)
# checkpoint = false             # the program saves and resumes from $RV_CHECKPOINT_DIR
# hosts = ["clusterA", "clusterB"] # race these clusters (default: the config's host)

[env]
# secrets = ["HF_TOKEN"]         # `rv env set HF_TOKEN` first; the job gets only these
# vars = { WANDB_MODE = "offline" }
)toml";
  return text;
}

} // namespace rv::cli

namespace rv::cli {

Result<int> write_example_task_file(Context& ctx)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto cwd = fs::current_path(ec);
  const auto dir = sync::find_project_root(cwd).value_or(cwd);
  const auto path = dir / "rv.toml";
  if (fs::exists(path, ec)) {
    return fail(ErrorCode::usage, fmt::format("{} exists: rv init --task-file keeps it", path.string()),
                "edit it, or move it away first (the example: docs/taskfile.md)");
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << example_task_file();
    if (!out.flush()) {
      return fail(ErrorCode::io, fmt::format("cannot write {}", path.string()));
    }
  }
  if (!ctx.global.quiet) {
    std::fputs(printable(fmt::format("wrote {}: `rv run --dry-run` shows its plan, `rv run` runs it\n", path.string()))
                   .c_str(),
               stdout);
  }
  return 0;
}

} // namespace rv::cli
