#pragma once
// SIGINT/SIGTERM become a flag that long-running loops poll, so that rv can clean up
// (kill children, cancel jobs) instead of dying mid-way.

namespace rv {

// Installs handlers for SIGINT, SIGTERM and SIGHUP that set the interrupt flag.
void install_interrupt_handlers();

// Tells whether an interrupt arrived; the signal number, or 0.
int interrupt_signal();

// Sets the flag as if `sig` had arrived (tests, timeouts).
void raise_interrupt(int sig);

// Clears the flag (tests).
void clear_interrupt();

} // namespace rv
