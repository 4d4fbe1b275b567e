// rv run --after (app/run/after.hpp): the spec, and the pure decision from the other request's record.

#include "app/run/after.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;

namespace {

JobRecord job(const std::string& strategy, const std::string& id, const std::string& state)
{
  JobRecord j;
  j.strategy_id = strategy;
  j.job_id = id;
  j.state = slurm::parse_job_state(state);
  return j;
}

RequestRecord first(RequestState state, std::vector<JobRecord> jobs, const std::string& winner = "")
{
  RequestRecord r;
  r.id = "3f9c02ab";
  r.host = "ssh u@a:22";
  r.state = state;
  r.jobs = std::move(jobs);
  r.winner = winner;
  return r;
}

} // namespace

TEST_CASE("after: REQ, REQ:ok and REQ:any, anything else is refused")
{
  auto plain = parse_after("3f9c02ab");
  REQUIRE(plain);
  CHECK(plain->request == "3f9c02ab");
  CHECK(plain->kind == AfterKind::ok);
  auto ok = parse_after("train:ok");
  REQUIRE(ok);
  CHECK(ok->request == "train");
  CHECK(ok->kind == AfterKind::ok);
  auto any = parse_after("812:any");
  REQUIRE(any);
  CHECK(any->request == "812");
  CHECK(any->kind == AfterKind::any);
  auto bad = parse_after("812:maybe");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::usage);
  CHECK(bad.error().message == "--after 812:maybe: 'maybe' is neither ok nor any");
  CHECK_FALSE(parse_after(""));
  CHECK_FALSE(parse_after(":ok"));
  CHECK_FALSE(parse_after("a b"));
}

TEST_CASE("after: a winner is depended on alone")
{
  const auto r = first(RequestState::won, {job("s1", "812", "RUNNING"), job("s2", "813", "CANCELLED")}, "s1");
  auto ok = decide_after(r, {"3f9c02ab", AfterKind::ok}, true);
  REQUIRE(ok);
  CHECK(ok->mode == AfterDecision::Mode::dependency);
  CHECK(ok->dependency == "afterok:812");
  CHECK(ok->record["request"] == "3f9c02ab");
  CHECK(ok->record["kind"] == "ok");
  CHECK(ok->record["dependency"] == "afterok:812");
  auto any = decide_after(r, {"3f9c02ab", AfterKind::any}, true);
  REQUIRE(any);
  CHECK(any->dependency == "afterany:812");
}

TEST_CASE("after: a request still racing: every live sibling, OR for ok, AND for any")
{
  const auto r = first(RequestState::submitted, {job("s1", "812", "PENDING"), job("s2", "", ""),
                                                 job("s3", "814", "CANCELLED"), job("s4", "815", "PENDING")});
  auto ok = decide_after(r, {"x", AfterKind::ok}, true);
  REQUIRE(ok);
  CHECK(ok->dependency == "afterok:812?afterok:815"); // refused (no id) and ended siblings left out
  auto any = decide_after(r, {"x", AfterKind::any}, true);
  REQUIRE(any);
  CHECK(any->dependency == "afterany:812:815");
  CHECK(any->note.find("812, 815") != std::string::npos);
}

TEST_CASE("after: an ended request: now, or refused for ok after a failure")
{
  for (const auto kind : {AfterKind::ok, AfterKind::any}) {
    auto done = decide_after(first(RequestState::done, {job("s1", "812", "COMPLETED")}, "s1"), {"x", kind}, true);
    REQUIRE(done);
    CHECK(done->mode == AfterDecision::Mode::now);
    CHECK(done->dependency.empty());
    CHECK_FALSE(done->record.contains("dependency"));
  }
  const auto failed = first(RequestState::failed, {job("s1", "812", "FAILED")}, "s1");
  auto refused = decide_after(failed, {"x", AfterKind::ok}, true);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "request 3f9c02ab failed, so --after 3f9c02ab:ok can never start");
  CHECK(refused.error().hint.starts_with("--after 3f9c02ab:any"));
  auto cancelled = decide_after(first(RequestState::cancelled, {}), {"x", AfterKind::ok}, false);
  REQUIRE_FALSE(cancelled);
  CHECK(cancelled.error().message == "request 3f9c02ab was cancelled, so --after 3f9c02ab:ok can never start");
  auto any = decide_after(failed, {"x", AfterKind::any}, true);
  REQUIRE(any);
  CHECK(any->mode == AfterDecision::Mode::now);
}

TEST_CASE("after: another cluster waits, a request without a job is an error")
{
  auto elsewhere =
      decide_after(first(RequestState::won, {job("s1", "812", "RUNNING")}, "s1"), {"x", AfterKind::ok}, false);
  REQUIRE(elsewhere);
  CHECK(elsewhere->mode == AfterDecision::Mode::wait);
  CHECK(elsewhere->dependency.empty());
  auto none = decide_after(first(RequestState::submitting, {job("s1", "", "")}), {"x", AfterKind::ok}, true);
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "request 3f9c02ab has no job Slurm holds yet (state submitting)");
}

TEST_CASE("after: the dependents of a request are the active ones whose after names it")
{
  RequestRecord b = first(RequestState::submitted, {});
  b.id = "b";
  b.after = {{"request", "3f9c02ab"}, {"kind", "ok"}};
  RequestRecord ended = b;
  ended.id = "ended";
  ended.state = RequestState::cancelled;
  RequestRecord other = b;
  other.id = "other";
  other.after = {{"request", "zzz"}, {"kind", "ok"}};
  RequestRecord none = first(RequestState::submitted, {});
  none.id = "none";
  const auto deps = dependents_of({b, ended, other, none}, "3f9c02ab");
  REQUIRE(deps.size() == 1);
  CHECK(deps.front().id == "b");
}
