#include "templates/render.hpp"

#include "cases.hpp"

#include <doctest/doctest.h>

using namespace rv::templates;
using rv::templates::testing::golden_cases;

namespace {

rv::Error render_error(const testing::Case& c)
{
  auto script = render(c.strategy, c.request, c.options);
  REQUIRE_FALSE(script.has_value());
  CHECK(script.error().code == rv::ErrorCode::usage);
  CHECK_FALSE(script.error().hint.empty());
  return script.error();
}

} // namespace

TEST_CASE("templates: bad inputs are usage errors with a hint")
{
  auto c = golden_cases().front();
  SUBCASE("empty command")
  {
    c.options.command = " \n\t";
    CHECK(render_error(c).message == "the command is empty");
  }
  SUBCASE("bad signal")
  {
    c.options.signal = "KILL";
    CHECK(render_error(c).message == "unsupported checkpoint signal 'KILL'");
  }
  SUBCASE("job name with bad characters")
  {
    c.request.job_name = "my job;rm";
    CHECK(render_error(c).message == "invalid job name 'my job;rm'");
  }
  SUBCASE("request id with a slash")
  {
    c.options.request_id = "../x";
    render_error(c);
  }
  SUBCASE("relative log dir")
  {
    c.options.log_dir = "logs";
    render_error(c);
  }
  SUBCASE("log dir with a percent sign")
  {
    c.options.log_dir = "/scratch/100%";
    render_error(c);
  }
  SUBCASE("constraint with a newline")
  {
    c.strategy.constraint = "a\n#SBATCH --x";
    render_error(c);
  }
  SUBCASE("environment variable name")
  {
    c.options.env = {{"1BAD", "x"}};
    render_error(c);
  }
  SUBCASE("checkpoint segment too short")
  {
    c.strategy.kind = rv::model::StrategyKind::checkpoint;
    c.strategy.walltime_s = 100;
    render_error(c);
  }
}

TEST_CASE("templates: signal names are normalised")
{
  CHECK(normalize_signal("SIGUSR2").value() == "USR2");
  CHECK(normalize_signal("usr1").value() == "USR1");
  CHECK(normalize_signal("term").value() == "TERM");
  CHECK_FALSE(normalize_signal("9").has_value());
  CHECK_FALSE(normalize_signal("").has_value());
}

TEST_CASE("templates: an empty job name falls back to rv-job")
{
  auto c = golden_cases().front();
  c.request.job_name.clear();
  auto script = render(c.strategy, c.request, c.options);
  REQUIRE(script.has_value());
  CHECK(script->find("#SBATCH --job-name=\"rv-job\"") != std::string::npos);
}
