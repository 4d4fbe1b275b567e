#include "core/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace rv {
namespace {
std::atomic<int> g_signal{0};

extern "C" void on_signal(int sig)
{
  g_signal.store(sig);
}
} // namespace

void install_interrupt_handlers()
{
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; // no SA_RESTART: blocking calls return EINTR and see the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  // A closed stdout pipe (`rv ps | head`) must not kill rv before it cleans up.
  std::signal(SIGPIPE, SIG_IGN);
}

int interrupt_signal()
{
  return g_signal.load();
}

void raise_interrupt(int sig)
{
  g_signal.store(sig);
}

void clear_interrupt()
{
  g_signal.store(0);
}

} // namespace rv
