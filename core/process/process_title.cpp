#include "core/process/process_title.hpp"
#include "core/platform/platform.hpp"

#include <algorithm>
#include <cstring>

namespace rv::proc {
namespace {
char* g_args = nullptr;
std::size_t g_size = 0;
} // namespace

void remember_args(int argc, char** argv)
{
  if (argc < 1 || argv == nullptr || argv[0] == nullptr) {
    return;
  }
  // The kernel lays the strings out one after another; take the run that is contiguous.
  char* end = argv[0] + std::strlen(argv[0]) + 1;
  for (int i = 1; i < argc && argv[i] == end; ++i) {
    end = argv[i] + std::strlen(argv[i]) + 1;
  }
  platform::remember_argv0(argv[0]);
  g_args = argv[0];
  g_size = static_cast<std::size_t>(end - argv[0]);
}

void set_process_title(std::string_view title)
{
  if (g_args == nullptr || g_size < 2) {
    return;
  }
  const auto n = std::min(title.size(), g_size - 1);
  std::memcpy(g_args, title.data(), n);
  std::memset(g_args + n, 0, g_size - n); // the last byte stays NUL: the kernel reads no further
}

} // namespace rv::proc
