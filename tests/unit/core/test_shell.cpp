#include "core/process/local_runner.hpp"
#include "core/process/shell.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::proc;
using namespace std::chrono_literals;
using namespace std::string_literals;

TEST_CASE("batch: stdin with NUL bytes and backslashes reaches the command byte for byte")
{
  LocalRunner r;
  Command c;
  c.argv = {"cat"};
  c.timeout = 20s;
  std::string data = "a\0b\0\0c\\0101\\n\\\\'%b%s\n"s;
  for (int i = 0; i < 256; ++i) {
    data += static_cast<char>(i);
  }
  data += "\0"s;
  c.stdin_data = data;
  Command second;
  second.argv = {"od", "-An", "-c"};
  second.stdin_data = "x\0y"s;
  second.timeout = 20s;
  auto outs = r.run_batch({c, second});
  REQUIRE(outs);
  REQUIRE(outs->size() == 2);
  CHECK((*outs)[0].exit_code == 0);
  CHECK((*outs)[0].out.size() == data.size());
  CHECK((*outs)[0].out == data);
  CHECK((*outs)[1].out.find("x  \\0   y") != std::string::npos);
}
