// Every rendered script must parse (`bash -n`) and pass shellcheck (skipped, with a message,
// where shellcheck is not installed: `apt-get install -y shellcheck`).

#include "exec_fixture.hpp"

#include <doctest/doctest.h>

using namespace rv::templates;
using namespace rv::templates::testing;

TEST_CASE("lint: every rendered script passes bash -n and shellcheck")
{
  ExecFixture fx;
  const bool have_shellcheck = ExecFixture::sh("command -v shellcheck >/dev/null 2>&1") == 0;
  if (!have_shellcheck) {
    MESSAGE("shellcheck not installed: only bash -n was run");
  }
  for (const auto& c : golden_cases()) {
    auto script = render(c.strategy, c.request, c.options);
    REQUIRE(script.has_value());
    auto file = fx.write_script(c.name, *script);
    CHECK_MESSAGE(ExecFixture::sh("bash -n '" + file + "'") == 0, c.name);
    if (have_shellcheck) {
      CHECK_MESSAGE(ExecFixture::sh("shellcheck -s bash '" + file + "' >&2") == 0, c.name);
    }
  }
}
