#pragma once
// Temp files for atomic writes beside a target that may sit in a directory others can write.

#include "core/result.hpp"

#include <filesystem>

namespace rv::store {

// A new temp file beside `path` for writing it atomically: `<path>.tmp.<16 random hex>`, created
// with O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file, never through a symlink a co-user
// planted) and mode 0600. Returns the open descriptor (the caller closes it) and the temp path.
struct TempFile {
  int fd = -1;
  std::filesystem::path path;
};
Result<TempFile> create_temp_beside(const std::filesystem::path& path);

} // namespace rv::store
