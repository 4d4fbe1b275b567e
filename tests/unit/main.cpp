#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "core/log.hpp"

#include <csignal>

int main(int argc, char** argv)
{
  rv::silence_logging();
  // As in rv itself (core/interrupt.cpp): a child that exits before reading all of its stdin makes
  // the runner's write fail with EPIPE, which the runner handles; without this, SIGPIPE killed the
  // whole test binary now and then (exit 141, no output).
  std::signal(SIGPIPE, SIG_IGN);
  doctest::Context context(argc, argv);
  return context.run();
}
