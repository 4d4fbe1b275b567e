// The cross-cluster gate (docs/multi-cluster.md): a job that won its cluster's claim runs the
// command only once rv wrote `go`; `stop`, or no word within the wait, ends it with exit 95 and
// the command never runs. Run with bash against a fake job, as test_exec does.

#include "exec_fixture.hpp"

#include <fstream>
#include <thread>

using namespace rv::templates;
using namespace rv::templates::testing;

namespace {

// A one-strategy request whose command appends a line to ran.txt; gated with `wait_s`.
std::string gated_script(ExecFixture& fx, std::int64_t wait_s)
{
  auto opts = fx.options("req-g");
  opts.strategy_rank = 1;
  opts.strategy_count = 1;
  opts.gate_wait_s = wait_s;
  opts.command = "echo ran >>'" + fx.path("ran.txt") + "'";
  return fx.write_script("job", render_ok(base_strategy(), base_request(), opts));
}

int run_job(ExecFixture& fx, const std::string& script)
{
  return ExecFixture::sh(fx.job_env("301") + "bash '" + script + "' >'" + fx.path("stdout.txt") + "' 2>'" +
                         fx.path("stderr.txt") + "'");
}

bool exists(const std::string& p)
{
  return std::filesystem::exists(p);
}

} // namespace

TEST_CASE("gate: a script of one cluster has no gate, across clusters the wait is rendered")
{
  ExecFixture fx;
  auto opts = fx.options("req-g");
  CHECK(render_ok(base_strategy(), base_request(), opts).find("_rv_gate") == std::string::npos);
  opts.gate_wait_s = 42;
  const auto script = render_ok(base_strategy(), base_request(), opts);
  CHECK(script.find("_rv_gate") != std::string::npos);
  CHECK(script.find("-lt $(( 42 * 5 )) ]") != std::string::npos); // 0.2 s ticks
  CHECK(script.find("exit 95") != std::string::npos);
  CHECK(k_not_chosen_exit == 95);
}

TEST_CASE("gate: with go the command runs once, its claim is this cluster's")
{
  ExecFixture fx;
  const auto script = gated_script(fx, 30);
  std::filesystem::create_directories(fx.path("rv/requests/req-g"));
  std::ofstream(fx.path("rv/requests/req-g/go")).put('\n');
  CHECK(run_job(fx, script) == 0);
  CHECK(fx.read("ran.txt") == "ran\n");
  CHECK(fx.read("rv/requests/req-g/claim/owner") == "301\n");
}

TEST_CASE("gate: go written while the job waits lets it run")
{
  ExecFixture fx;
  const auto script = gated_script(fx, 30);
  std::thread rv([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::filesystem::create_directories(fx.path("rv/requests/req-g"));
    std::ofstream(fx.path("rv/requests/req-g/go")).put('\n');
  });
  const int rc = run_job(fx, script);
  rv.join();
  CHECK(rc == 0);
  CHECK(fx.read("ran.txt") == "ran\n");
  CHECK(fx.read("stderr.txt").find("rv chose this cluster") != std::string::npos);
}

TEST_CASE("gate: stop ends the job with exit 95 and the command never runs")
{
  ExecFixture fx;
  const auto script = gated_script(fx, 30);
  std::filesystem::create_directories(fx.path("rv/requests/req-g"));
  std::ofstream(fx.path("rv/requests/req-g/stop")).put('\n');
  CHECK(run_job(fx, script) == 95);
  CHECK_FALSE(exists(fx.path("ran.txt")));
  CHECK(fx.read("stderr.txt").find("rv chose another cluster") != std::string::npos);
}

TEST_CASE("gate: no word from rv within the wait ends the job with exit 95, command not run")
{
  ExecFixture fx;
  const auto script = gated_script(fx, 2);
  const auto start = std::chrono::steady_clock::now();
  CHECK(run_job(fx, script) == 95);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= std::chrono::seconds(2));
  CHECK(waited < std::chrono::seconds(20)); // bounded: the wait, not forever
  CHECK_FALSE(exists(fx.path("ran.txt")));
  CHECK(fx.read("stderr.txt").find("did not choose job 301 within 2s") != std::string::npos);
}
