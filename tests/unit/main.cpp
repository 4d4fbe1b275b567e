#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "core/log.hpp"

int main(int argc, char** argv)
{
  rv::silence_logging();
  doctest::Context context(argc, argv);
  return context.run();
}
