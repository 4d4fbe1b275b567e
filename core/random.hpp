#pragma once
// Unpredictable names: temp files beside a target (N4: a co-user who can write the directory
// cannot plant a file or symlink under a name rv will use) and request ids.

#include <string>

namespace rv {

// `bytes` random bytes (from std::random_device, the kernel's generator on Linux) as lowercase hex.
std::string random_hex(int bytes);

} // namespace rv
