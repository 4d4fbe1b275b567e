// The background forward's job checks after a failed login (app/node/forward.hpp,
// check_forwarded_job; security-review-3 S9): it has no terminal, so on a host that wants a second
// factor every check was a fresh, failing login, every 5 s, for as long as the job ran. Now the
// checks wait minutes after a failed login and the forward ends after LoginBackoff::k_max.

#include "app/node/forward.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

TEST_CASE("forward: after a failed login the job is not checked again for minutes, k_max failures end it")
{
  World world("forward-logins");
  const Error refused{ErrorCode::auth_failed, "ssh A: keyboard-interactive: no terminal to answer the prompt", ""};
  for (int i = 0; i < LoginBackoff::k_max; ++i) {
    world.cluster.on([](const auto& a) { return has(a, "squeue"); }, refused);
  }
  // Past the bound the job would read as running: a forward that kept checking would go on.
  world.cluster.fallback = [](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
    return has(a, "squeue") ? std::optional(Cluster::ok(squeue_row("42", "RUNNING", "h1"))) : std::nullopt;
  };
  NodeTarget target;
  target.request_id = "aaaa0001";
  target.job_id = "42";
  target.job_name = "train";
  target.node = "h1";
  LoginBackoff logins;
  ForwardEnd end;
  int checks = 0;
  const auto start = world.clock.now();
  while (check_forwarded_job(world.env, target, logins, end) && checks < 2000) {
    ++checks;
    world.clock.advance(std::chrono::seconds(5)); // run_forward's check_every
  }
  CHECK(end.login_failed);
  CHECK_FALSE(end.job_ended);
  CHECK(world.cluster.done());
  CHECK(world.cluster.seen.size() == static_cast<std::size_t>(LoginBackoff::k_max)); // one login per try
  const auto took = world.clock.now() - start;
  CHECK(took >= std::chrono::minutes(15)); // 1 + 2 + 4 + 8 minutes between the tries
  CHECK(took < std::chrono::minutes(16));
}

TEST_CASE("forward: a login that works again resets the wait, an ended job ends the forward")
{
  World world("forward-logins-reset");
  const Error refused{ErrorCode::auth_failed, "ssh A: no terminal", ""};
  world.cluster.on([](const auto& a) { return has(a, "squeue"); }, refused);
  world.cluster.on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("42", "RUNNING", "h1")));
  world.cluster.on([](const auto& a) { return has(a, "squeue"); }, Cluster::ok(squeue_row("42", "COMPLETED", "h1")));
  NodeTarget target;
  target.job_id = "42";
  target.job_name = "train";
  LoginBackoff logins;
  ForwardEnd end;
  CHECK(check_forwarded_job(world.env, target, logins, end)); // refused: 1 min before the next try
  CHECK(logins.failures() == 1);
  CHECK(check_forwarded_job(world.env, target, logins, end)); // not tried: nothing asked
  CHECK(world.cluster.seen.size() == 1);
  world.clock.advance(std::chrono::minutes(1));
  CHECK(check_forwarded_job(world.env, target, logins, end)); // running
  CHECK(logins.failures() == 0);
  CHECK_FALSE(check_forwarded_job(world.env, target, logins, end)); // completed
  CHECK(end.job_ended);
  CHECK(end.job_state == "COMPLETED");
  CHECK(world.cluster.done());
}
