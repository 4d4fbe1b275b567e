#pragma once
// The task file (`rv run task.toml`, or rv.toml in the project root when no command is given):
// a run's recipe kept beside the code (docs/taskfile.md). Reading it is a pure function of its
// text (TOML through toml++), and so is laying it under the command line's flags: a flag given
// on the command line always wins over the file's key.

#include "app/run/plan/study.hpp"
#include "cli/job_flags.hpp"
#include "core/result.hpp"

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::cli {

// Every key of a task file, read and type-checked; nullopt (or empty) = not in the file.
struct TaskFile {
  std::string path;             // as named, for messages
  std::vector<std::string> run; // `run`: one word = a shell command line; several = an argv
  std::string setup;            // `setup`: one shell command line ("" = none)
  std::optional<std::vector<std::string>> outputs;
  // [resources]
  std::optional<int> gpus;
  std::optional<std::vector<std::string>> gpu_types;
  std::optional<std::string> time; // checked with parse_duration
  std::optional<int> nodes;
  std::optional<std::string> mem; // checked with parse_memory_mb
  std::optional<bool> checkpoint;
  std::optional<std::vector<std::string>> hosts;
  // [env]
  std::optional<std::vector<std::string>> secrets;       // names of `rv env` secrets the job needs
  std::vector<std::pair<std::string, std::string>> vars; // by name (toml++ sorts a table's keys)
  // A study (docs/studies.md), each key as its flag carries it, checked by the flag's own parser
  std::optional<std::string> array;               // `array`: --array SPEC
  std::optional<std::vector<std::string>> sweeps; // [sweep]: one `NAME=v1,v2` (--sweep) per key, in the file's order
  std::optional<std::string> sweep_file;          // `sweep_file`: as written (relative to the task file)
  int sweep_file_line = 0;                        // its line, for the messages of reading it
  std::optional<int> retries;                     // --retries N
  std::optional<bool> retry_failed;               // --retry-failed, --no-retry-failed
  std::optional<std::string> prefer;              // --prefer time|cost
};

// Reads `text` (the content of the file `path`). Every mistake is one usage error that starts
// with `path:line:`: TOML syntax, an unknown key (with a did-you-mean), a wrong type, a bad
// duration or size, a missing `run`.
Result<TaskFile> parse_task_file(std::string_view text, const std::string& path);

// The long names of the flags the command line gave (`gpu`, `type`, `time`, `env`, `host`...),
// which the file's keys never override.
using GivenFlags = std::set<std::string>;

// The long names of every option `cmd` parsed (a negated flag's too: --no-retry-failed gives
// `retry-failed` and `no-retry-failed`).
GivenFlags given_flags(const CLI::App& cmd);

// What the file sets besides the job flags: the command, and the global --host list.
struct TaskApplied {
  std::vector<std::string> command;
  std::vector<std::string> hosts; // empty = the file names none (or --host was given)
  bool study = false;             // the file's array, [sweep] or sweep_file applied
  bool sweep_file = false;        // the file's sweep_file applied (study.sweep_file: the path to read)
};

// Lays `file` under `flags` and `study`: each key sets its flag unless `given` holds the flag's
// name (`env`: --env KEY=... wins for that KEY only; --sweep or --sweep-file replaces the file's
// sweep, whichever form it has). `sweep_file` becomes a path relative to the task file's folder.
// Pure.
TaskApplied apply_task_file(const TaskFile& file, JobFlags& flags, app::study::StudyFlags& study,
                            const GivenFlags& given);

// Which task file `rv run`'s words name, before any round trip: `words` of one word ending in
// .toml that names an existing file (relative to `cwd`) -> that file; no words -> rv.toml in the
// project root when there is one; else nullopt (a plain command). A .toml file followed by more
// words is an error (the file's `run` is the command).
Result<std::optional<std::filesystem::path>> task_file_of(const std::vector<std::string>& words,
                                                          const std::filesystem::path& cwd);

// rv run's own flags for what a task file holds and no other flag does: --setup LINE, --secret NAME.
void add_task_flags(CLI::App* cmd, JobFlags& flags);

// `rv run`'s command, and the task file that set its study ("" = none: no file, or a file with no
// study key that applied), to name in the study's messages.
struct RunCommand {
  std::vector<std::string> words;
  std::string study_file;
};

// `rv run`'s command: the words given, or the task file they name (or rv.toml, given none) read
// and laid under `flags` and `study` (the flags `cmd` parsed win; its `hosts` go into the config's
// flag layer unless --host was given; its sweep_file is read here). No command and no rv.toml is a
// usage error.
Result<RunCommand> command_or_task_file(const std::vector<std::string>& words, JobFlags& flags,
                                        app::study::StudyFlags& study, const CLI::App& cmd, Context& ctx);

// The commented example `rv init --task-file` writes as rv.toml.
const std::string& example_task_file();

// `rv init --task-file`: writes example_task_file() as rv.toml in the project root (else the
// current directory); an existing rv.toml is kept, and that is an error.
Result<int> write_example_task_file(Context& ctx);

} // namespace rv::cli
