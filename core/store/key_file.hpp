#pragma once
// A local secret key in a file of its own (0600, 64 hex characters): made once, on first use, from
// the kernel's random source, and never sent anywhere. rv signs its workspace markers with it.

#include "core/result.hpp"

#include <filesystem>
#include <string>

namespace rv::store {

// The key stored at `path`, creating the file (and its directory, 0700) when it does not exist.
// Two processes creating it at once end with the same key (the file is linked into place whole).
// An error when the file is not a regular file of 64 hex characters, or is readable by others.
Result<std::string> load_or_create_key(const std::filesystem::path& path);

} // namespace rv::store
