// Control characters from cluster strings and file names never reach the terminal raw.

#include "core/log.hpp"
#include "core/printable.hpp"

#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

TEST_CASE("printable: escapes C0, DEL and C1 controls, keeps tab, newline and UTF-8")
{
  CHECK(rv::printable("plain text") == "plain text");
  CHECK(rv::printable("a\x1b[31mred\x1b]0;title\x07") == "a\\x1b[31mred\\x1b]0;title\\x07");
  CHECK(rv::printable("col\tline\nnext") == "col\tline\nnext");
  CHECK(rv::printable(std::string("nul\0del\x7f", 8)) == "nul\\x00del\\x7f");
  CHECK(rv::printable("csi\xc2\x9b"
                      "31m") == "csi\\u009b31m");                     // U+009B, the 8-bit CSI
  CHECK(rv::printable("ünïcödé ✓ \xc2\xa0") == "ünïcödé ✓ \xc2\xa0"); // U+00A0 is no control
}

TEST_CASE("printable: rv's log lines escape what a message carries")
{
  std::ostringstream text;
  auto inner = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
  inner->set_pattern("%v");
  spdlog::logger logger("t", std::make_shared<rv::PrintableSink>(inner));
  logger.info("job name {}", "evil\x1b[2J");
  CHECK(text.str() == "job name evil\\x1b[2J\n");
}
