// The terminal sink: the status block is drawn at the bottom of stderr and erased before any
// other byte; a log line goes above it.

#include "app/run/show/status_view.hpp"
#include "cli/context.hpp"
#include "core/log.hpp"

#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>

using namespace rv;

namespace {

std::string contents(std::FILE* f)
{
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
    s.append(buf, n);
  }
  return s;
}

} // namespace

TEST_CASE("std output: the block is erased before the job's first byte and stays gone")
{
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out);
  REQUIRE(err);
  {
    cli::StdOutput o(out, err, app::Terminal{true, false, 80});
    o.status({"rv: waiting 0:01", "  s1 301 PENDING"});
    o.status({"rv: waiting 0:02", "  s1 301 PENDING"});
    const auto drawn = app::redraw_block(0, {"rv: waiting 0:01", "  s1 301 PENDING"}) +
                       app::redraw_block(2, {"rv: waiting 0:02", "  s1 301 PENDING"});
    o.out("epoch 1\n");                  // the job's output: the block is erased before its first byte
    CHECK(contents(out) == "epoch 1\n"); // stdout: the job's bytes, nothing else
    CHECK(contents(err) == drawn + app::erase_block(2));
    o.err("warn\n");
    CHECK(contents(err) == drawn + app::erase_block(2) + "warn\n"); // erased once
    o.status({});                                                   // nothing shown: nothing to erase
  }
  CHECK(contents(err).ends_with("warn\n")); // nor when it goes
  std::fclose(out);
  std::fclose(err);
}

TEST_CASE("std output: a log line is written above the block, which is drawn again below it")
{
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(err);
  setup_logging(0, false); // the CLI's logger, on this process's stderr
  {
    cli::StdOutput o(out, err, app::Terminal{true, false, 80});
    o.status({"rv: waiting"});
    o.status({"rv: waiting 2"});
    spdlog::info("cancelled 302"); // the line itself goes to the process's stderr
    CHECK(contents(err) == app::redraw_block(0, {"rv: waiting"}) + app::redraw_block(1, {"rv: waiting 2"}) +
                               app::erase_block(1) + app::redraw_block(0, {"rv: waiting 2"}));
    o.out("x");
    spdlog::info("after the block is gone"); // no interlude left: nothing more on err
    CHECK(contents(err).ends_with(app::erase_block(1)));
  }
  silence_logging();
  std::fclose(out);
  std::fclose(err);
}
