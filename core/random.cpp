#include "core/random.hpp"

#include <fmt/format.h>

#include <random>

namespace rv {

std::string random_hex(int bytes)
{
  std::random_device rd;
  std::string out;
  for (int i = 0; i < bytes; ++i) {
    out += fmt::format("{:02x}", rd() & 0xffu);
  }
  return out;
}

} // namespace rv
