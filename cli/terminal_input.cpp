#include "cli/terminal_input.hpp"

#include <cstdio>
#include <iostream>
#include <termios.h>
#include <unistd.h>

namespace rv::cli {

std::string read_hidden_line(const std::string& prompt)
{
  std::string value;
  termios saved{};
  const bool have = ::isatty(0) && ::tcgetattr(0, &saved) == 0;
  if (have) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(0, TCSANOW, &quiet);
  }
  std::fputs(prompt.c_str(), stderr);
  std::fflush(stderr);
  std::getline(std::cin, value);
  if (have) {
    ::tcsetattr(0, TCSANOW, &saved);
  }
  std::fputs("\n", stderr);
  return value;
}

} // namespace rv::cli
