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

TEST_CASE("lint: an rv run --in step's program passes bash -n and shellcheck, on one node and on every node")
{
  ExecFixture fx;
  const bool have_shellcheck = ExecFixture::sh("command -v shellcheck >/dev/null 2>&1") == 0;
  auto s = base_strategy();
  s.nodes = 2;
  auto o = base_options();
  o.secrets_file = "/scratch/alice/.rv/requests/r1/env";
  o.env = {{"MY_VAR", "a b"}};
  for (bool every : {false, true}) {
    auto program = render_step(s, base_request(), o, {every, "/scratch/alice/.rv/logs/train-7.step-1"});
    REQUIRE(program.has_value());
    // What srun runs is `bash -c PROGRAM`: as a file with a shebang for shellcheck.
    auto file = fx.write_script(every ? "every" : "one", "#!/bin/bash\n" + *program);
    CHECK_MESSAGE(ExecFixture::sh("bash -n '" + file + "'") == 0, every);
    if (have_shellcheck) {
      // SC1091 (info): the secrets file lives on the cluster, not here, for shellcheck to follow.
      CHECK_MESSAGE(ExecFixture::sh("shellcheck -s bash -e SC1091 '" + file + "' >&2") == 0, every);
    }
  }
}
