#pragma once
// Tabular command output: delimited (`|`, 0x1F, any string) or blank-aligned with a header.

#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// Rows of fields, with the header when the output had one.
struct Table {
  std::vector<std::string> header;            // upper-case column names; empty when none
  std::vector<std::vector<std::string>> rows; // fields trimmed of padding
};

// Splits output into rows. `delim` "" means: 0x1F if present, else '|' if present, else
// blank runs. `header_words` are column names that mark a header line (first line only);
// a `---- ----` line under the header gives exact column spans (sacct/sshare fixed width),
// so empty cells stay in place; cells past the end of a line are left out. Leading 0x1E record
// marks and blank lines are dropped.
Table parse_table(std::string_view text, std::string_view delim, const std::vector<std::string>& header_words);

// The index of `name` in `t.header`, or -1.
int column(const Table& t, std::string_view name);

} // namespace rv::slurm
