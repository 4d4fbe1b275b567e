// app/request/steps.hpp: `REQ/step-N` names, the steps kept in a request's record (numbered under
// the store's lock, ended once), and a record's save() that leaves them alone.
#include "app/request/requests.hpp"
#include "app/request/steps.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <thread>
#include <unistd.h>

using namespace rv;
using namespace rv::app;

namespace {

struct TempStore {
  std::filesystem::path dir;
  store::RecordStore store;
  explicit TempStore(const char* name)
      : dir(std::filesystem::temp_directory_path() / fmt::format("rv-steps-{}-{}", name, ::getpid())), store(dir)
  {
    std::filesystem::remove_all(dir);
  }
  ~TempStore() { std::filesystem::remove_all(dir); }
};

RequestRecord record(const std::string& id)
{
  RequestRecord r;
  r.id = id;
  r.name = "rv-" + id;
  r.kind = "up";
  r.created_at = "2026-11-29T03:00:00Z";
  return r;
}

} // namespace

TEST_CASE("steps: REQ/step-N is a step, REQ/N (a study's task) and no slash are not, anything else with a slash is an "
          "error")
{
  auto r = parse_step_ref("3f9c02ab/step-12");
  REQUIRE(r.has_value());
  REQUIRE(r->has_value());
  CHECK((*r)->request == "3f9c02ab");
  CHECK((*r)->n == 12);
  auto plain = parse_step_ref("3f9c02ab");
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->has_value());
  auto task = parse_step_ref("3f9c02ab/7"); // `rv logs REQ/7`: the study's reader takes it
  REQUIRE(task.has_value());
  CHECK_FALSE(task->has_value());
  for (const char* bad : {"3f9c02ab/", "/step-1", "3f9c02ab/step-", "3f9c02ab/step-0", "3f9c02ab/step--1",
                          "3f9c02ab/step-1x", "3f9c02ab/x2", "3f9c02ab/step-99999999999"}) {
    CAPTURE(bad);
    auto e = parse_step_ref(bad);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().code == ErrorCode::usage);
    CHECK(e.error().hint.find("REQUEST/step-N") != std::string::npos);
  }
  CHECK(step_ref("3f9c02ab", 4) == "3f9c02ab/step-4");
  CHECK(step_name("rv-3f9c02ab", 4) == "rv-3f9c02ab.step-4");
}

TEST_CASE("steps: numbered one past the last under the store's lock, ended once, found by number")
{
  TempStore t("number");
  auto rec = record("aa11bb22");
  REQUIRE(t.store.create(rec.id, to_json(rec)).has_value());
  StepRecord s;
  s.job_id = "77";
  s.name = rec.name;
  s.log_base = "/logs/rv-aa11bb22-77";
  s.state = "running";
  // Two `rv run --in` at once: two numbers, never one twice.
  std::vector<int> got(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      auto added = add_step(t.store, rec.id, s);
      got[i] = added ? added->n : -1;
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  auto third = find_step(t.store, rec.id, 3);
  REQUIRE(third.has_value());
  CHECK(third->name == "rv-aa11bb22.step-3");
  CHECK(third->log_base == "/logs/rv-aa11bb22-77.step-3");
  CHECK(step_log_path(*third, false) == "/logs/rv-aa11bb22-77.step-3.out");
  CHECK(step_status_path(*third) == "/logs/rv-aa11bb22-77.step-3.status");

  REQUIRE(end_step(t.store, rec.id, 3, "failed", 7).has_value());
  REQUIRE(end_step(t.store, rec.id, 3, "cancelled", std::nullopt).has_value()); // final: kept
  third = find_step(t.store, rec.id, 3);
  CHECK(third->state == "failed");
  CHECK(third->exit_code == 7);
  auto missing = find_step(t.store, rec.id, 42);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().hint.find("aa11bb22/step-8") != std::string::npos);

  // A step that ran on two nodes has a log per node.
  StepRecord two = *third;
  two.nodes = 2;
  CHECK(step_log_path(two, true, 1) == "/logs/rv-aa11bb22-77.step-3.node1.err");
  CHECK(step_status_path(two) == "/logs/rv-aa11bb22-77.step-3.node0.status");
}

TEST_CASE("steps: a request's save() after a concurrent change keeps the steps another rv added")
{
  TempStore t("merge");
  auto rec = record("cc33dd44");
  REQUIRE(t.store.create(rec.id, to_json(rec)).has_value());
  auto loaded = request_from_json(*t.store.read(rec.id));
  REQUIRE(loaded.has_value());
  auto other = *loaded;
  StepRecord s;
  s.name = rec.name;
  s.log_base = "/l/x";
  REQUIRE(add_step(t.store, rec.id, s).has_value());
  // `rv ps` saves its copy twice (it read the record before the step was added).
  other.state = RequestState::won;
  save(t.store, other);
  other.winner = "s1";
  save(t.store, other);
  auto now = t.store.read(rec.id);
  REQUIRE(now.has_value());
  CHECK(steps_of(*now).size() == 1);
  CHECK(now->value("winner", "") == "s1");
}
