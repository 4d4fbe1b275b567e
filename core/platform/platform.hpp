#pragma once
// The portability seam (issue #40, docs/portability.md): every call rv makes that Linux has and
// macOS (or plain POSIX) does not, behind one small interface (side_api.hpp), with two sides:
//   linux_side  Linux's calls: SO_PEERCRED, /proc/self/exe, /proc/self/fd, /proc/PID/stat, pipe2,
//               accept4, SOCK_CLOEXEC, MSG_NOSIGNAL, prctl, getrandom, close_range,
//               explicit_bzero, openat2 (platform_linux.cpp, compiled on Linux only)
//   posix_side  what POSIX and macOS offer instead: getpeereid, _NSGetExecutablePath (else argv[0]
//               on $PATH), an fcntl loop, pipe/socket/accept + FD_CLOEXEC, SO_NOSIGPIPE,
//               getentropy, memset_s (else a volatile loop), proc_pidinfo (platform_posix.cpp,
//               compiled everywhere)
// The names directly in rv::platform are this system's side, chosen at compile time: Linux's on
// Linux, POSIX's elsewhere; Linux behaves as before the seam. The POSIX side is built and
// unit-tested on Linux too (tests/unit/core/test_platform.cpp), so the code macOS would run is compiled
// and checked in every build.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace rv::platform {

namespace posix_side {
#include "core/platform/side_api.hpp"

// The pure part of executable_path off macOS: argv[0] made absolute (a name with a slash against
// `cwd`, a bare name searched along `path_env`: the first regular executable file); "" if none.
std::string resolve_argv0(std::string_view argv0, std::string_view path_env, std::string_view cwd);
} // namespace posix_side

#if defined(__linux__)
namespace linux_side {
#include "core/platform/side_api.hpp"
} // namespace linux_side
namespace side = linux_side;
#else
namespace side = posix_side;
#endif

// main's argv[0] (core/process/process_title.cpp's remember_args keeps it), for the POSIX side's
// executable_path where the system does not say.
void remember_argv0(const char* argv0);
const std::string& remembered_argv0();

// This system's side.
using side::cloexec_accept;
using side::cloexec_pipe;
using side::cloexec_socket;
using side::close_from;
using side::executable_path;
using side::forbid_inspection;
using side::open_dir_beneath;
using side::open_fds;
using side::peer_uid;
using side::process_identity;
using side::random_bytes;
using side::secure_zero;
using side::self_exec_path;
using side::send_nosignal;

} // namespace rv::platform
