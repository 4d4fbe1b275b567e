#pragma once
// Whether a live process holds a lock file (FileLock, flock): proof of life that a stale pid in a
// record cannot fake (a dead holder's lock is released by the kernel).

#include <filesystem>

namespace rv::store {

// True when some process holds an flock on `path`; false when nobody does or the file is missing.
bool lock_held(const std::filesystem::path& path);

} // namespace rv::store
