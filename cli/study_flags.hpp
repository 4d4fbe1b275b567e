#pragma once
// `rv run`'s study flags (docs/studies.md): --array, --sweep, --sweep-file, --retries,
// --retry-failed, --no-prefix; checked before any round trip.

#include "app/run/plan/study.hpp"

#include <CLI/CLI.hpp>

namespace rv::cli {

// Adds the study flags to `cmd`.
void add_study_flags(CLI::App* cmd, app::study::StudyFlags& f);

// Reads --sweep-file (when given and not read yet) into f.sweep_file_text; a usage error when it
// cannot be read.
Result<void> read_sweep_file(app::study::StudyFlags& f);

} // namespace rv::cli
