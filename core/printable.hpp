#pragma once
// Text from the cluster or the file system (job names, Slurm's reasons and errors, file names)
// may hold terminal escape sequences; printed as is, they can recolour, retitle or rewrite the
// user's terminal. rv's own lines (logs, errors, tables) show such bytes escaped. The job's own
// output is never touched: it reaches the user byte for byte.

#include <string>
#include <string_view>

namespace rv {

// `text` with every control character but tab and newline (C0, DEL, and the C1 controls
// U+0080-U+009F) written as `\xNN` (C1 as `\u0085` style); other bytes, UTF-8 included, as is.
std::string printable(std::string_view text);

} // namespace rv
