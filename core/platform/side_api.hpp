// One side of the portability seam (core/platform/platform.hpp): included inside
// rv::platform::linux_side and rv::platform::posix_side, so that both declare the same functions.
// No include guard on purpose.

// The uid of the process at the other end of the connected AF_UNIX socket `fd`; nullopt if the
// system does not say.
std::optional<uid_t> peer_uid(int fd);

// The absolute path of the running executable; "" when the system does not say.
std::string executable_path();

// The path to exec to run this same binary again (Linux: /proc/self/exe, which names it even when
// the file was replaced since); "" when unknown.
std::string self_exec_path();

// The descriptors open in this process, ascending.
std::vector<int> open_fds();

// Closes every descriptor >= lowest. Async-signal-safe: for a child between fork and exec.
void close_from(int lowest);

// pipe() with FD_CLOEXEC on both ends: 0, or -1 with errno.
int cloexec_pipe(int fds[2]);

// socket() with FD_CLOEXEC (and no SIGPIPE, where that is a socket option): -1 with errno.
int cloexec_socket(int domain, int type, int protocol);

// accept() with FD_CLOEXEC, O_NONBLOCK when asked, and no SIGPIPE as above: -1 with errno.
int cloexec_accept(int listen_fd, bool nonblocking);

// send() that never raises SIGPIPE; `flags` as send's.
ssize_t send_nosignal(int fd, const void* data, std::size_t size, int flags);

// No other process of the user may attach to this one or read its memory (Linux: not dumpable).
// True when done, or when the system offers nothing beyond the core limit that
// rv::forbid_core_dumps sets itself.
bool forbid_inspection();

// Overwrites `size` bytes with zeros by stores the compiler may not drop.
void secure_zero(void* data, std::size_t size);

// Fills `data` with `size` bytes from the kernel's random source; false with errno.
bool random_bytes(void* data, std::size_t size);

// "PID START": the process and when it started, so that a pid the system gave to another process
// since is not taken for it; "" when the system does not say (then rv does nothing to a process
// that only its pid names).
std::string process_identity(pid_t pid);

// The directory `path` (plain, relative) beneath the open directory `root`, never through a
// symlink nor out of `root`, in one call where the kernel can (openat2's RESOLVE_BENEATH): its
// descriptor, or -1 with errno (ENOSYS where there is no such call: the caller walks the path one
// O_NOFOLLOW step at a time, core/store/beneath.cpp).
int open_dir_beneath(int root, const std::string& path);
