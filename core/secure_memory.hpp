#pragma once
// Keeping a password from leaking out of this process (rv init, N9): no core dumps while it is
// held, copies zeroed before they are freed, and the environment variable that carried it
// overwritten where /proc/<pid>/environ shows it.

#include <string>

namespace rv {

// Zeroes every byte of `s` (explicit_bzero: the compiler cannot drop it) and empties it.
void wipe(std::string& s);

// From now on this process writes no core dump and other processes of the user cannot read its
// memory through /proc (PR_SET_DUMPABLE 0, RLIMIT_CORE 0). Returns whether both took effect.
bool forbid_core_dumps();

// Overwrites the value of environment variable `name` in place, then unsets it: unsetenv alone
// leaves the bytes of the initial environment (what /proc/<pid>/environ shows) as they were.
void scrub_env(const char* name);

} // namespace rv
