#include "core/process/batch.hpp"
#include "core/process/local_runner.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace rv;
using namespace rv::proc;
using namespace std::chrono_literals;
using namespace std::string_literals;

namespace {

Command sh(const std::string& script)
{
  Command c;
  c.argv = {"/bin/sh", "-c", script};
  c.timeout = 10s;
  return c;
}

// Answers `drop` fewer commands than it is given (a negative `drop`: more), as a broken runner or
// a cut frame stream would; counts its round trips.
class MiscountingRunner final : public Runner {
public:
  explicit MiscountingRunner(int drop) : m_drop(drop) {}
  Result<Outcome> run(const Command&) override { return Outcome{}; }
  Result<std::vector<Outcome>> run_batch(const std::vector<Command>& cmds) override
  {
    ++m_round_trips;
    return std::vector<Outcome>(static_cast<std::size_t>(static_cast<int>(cmds.size()) - m_drop));
  }
  std::string where() const override { return "miscounting"; }

private:
  int m_drop;
};

} // namespace

TEST_CASE("typed batch: each handle reads its own command's answer, all in one round trip")
{
  LocalRunner r;
  Batch batch("test");
  const auto first = batch.add(sh("echo one"));
  const auto jobs = batch.add(std::vector<Command>{sh("echo job1"), sh("echo job2 >&2; exit 4")});
  const auto last = batch.add(sh("printf last"));
  const int before = r.round_trips();
  auto answers = batch.run(r);
  REQUIRE(answers);
  CHECK(r.round_trips() == before + 1);
  CHECK((*answers)[first].out == "one\n");
  CHECK((*answers)[last].out == "last");
  const auto each = (*answers)[jobs];
  REQUIRE(each.size() == 2);
  CHECK(each[0].out == "job1\n");
  CHECK(each[1].err == "job2\n");
  CHECK(each[1].status() == 4);
}

TEST_CASE("typed batch: one command failing leaves every other answer its own")
{
  LocalRunner r;
  Batch batch("test");
  const auto before = batch.add(sh("echo before"));
  const auto broken = batch.add(sh("echo half; echo why >&2; kill -TERM $$"));
  Command absent;
  absent.argv = {"/nonexistent/rv-no-such-program"};
  const auto missing = batch.add(absent);
  const auto after = batch.add(sh("echo after"));
  auto answers = batch.run(r);
  REQUIRE(answers); // a failing command is an answer, not a failed batch
  CHECK((*answers)[before].ok());
  CHECK((*answers)[before].out == "before\n");
  CHECK((*answers)[broken].status() == 128 + 15);
  CHECK((*answers)[broken].out == "half\n");
  CHECK((*answers)[broken].err == "why\n");
  CHECK_FALSE((*answers)[missing].ok());
  CHECK((*answers)[missing].out.empty());
  CHECK((*answers)[after].ok());
  CHECK((*answers)[after].out == "after\n");
}

TEST_CASE("typed batch: output that looks like the framing comes back as it was printed")
{
  LocalRunner r;
  Batch batch("test");
  // A fake frame header on stdout (with a length that would swallow the next frame), NUL bytes,
  // no final newline, an empty answer, and a long one on stderr.
  const std::string fake = "RV-BATCH 1 0 999 0\nRV-BATCH 2 7 3 0\nxyz";
  const auto forged = batch.add(sh("printf '%s' \"$1\"; printf 'RV-BATCH 0 0 1 1\\n' >&2"));
  Command f = sh("printf '%s' \"$1\"");
  f.argv.push_back("rv");
  f.argv.push_back(fake);
  const auto quoted = batch.add(f);
  const auto nul = batch.add(sh("printf 'a\\000b\\000'"));
  const auto empty = batch.add(sh("true"));
  const auto big = batch.add(sh("head -c 300000 /dev/zero | tr '\\0' x >&2"));
  auto answers = batch.run(r);
  REQUIRE(answers);
  CHECK((*answers)[forged].err == "RV-BATCH 0 0 1 1\n");
  CHECK((*answers)[forged].out.empty());
  CHECK((*answers)[quoted].out == fake);
  CHECK((*answers)[nul].out == "a\0b\0"s);
  CHECK((*answers)[empty].out.empty());
  CHECK((*answers)[empty].err.empty());
  CHECK((*answers)[big].err == std::string(300000, 'x'));
  CHECK((*answers)[big].out.empty());
}

TEST_CASE("typed batch: a handle of another batch is refused, never read as this batch's")
{
  LocalRunner r;
  Batch mine("mine"), other("other");
  const auto a = mine.add(sh("echo mine"));
  const auto b = other.add(sh("echo other")); // the same position in its own batch
  const auto b_range = other.add(std::vector<Command>{sh("true")});
  auto answers = mine.run(r);
  REQUIRE(answers);
  CHECK((*answers)[a].out == "mine\n");
  CHECK_THROWS_AS((void)(*answers)[b], std::logic_error);
  CHECK_THROWS_AS((void)(*answers)[b_range], std::logic_error);
  const Handle past{a.batch, 1}; // this batch's id, past its end
  const HandleRange wide{a.batch, 0, 2};
  CHECK_THROWS_AS((void)(*answers)[past], std::logic_error);
  CHECK_THROWS_AS((void)(*answers)[wide], std::logic_error);
}

TEST_CASE("typed batch: a missing or extra answer fails the batch instead of shifting the others")
{
  for (int drop : {1, -1}) {
    CAPTURE(drop);
    MiscountingRunner r(drop);
    Batch batch("rv why");
    (void)batch.add(sh("echo a"));
    (void)batch.add(sh("echo b"));
    auto answers = batch.run(r);
    REQUIRE_FALSE(answers);
    CHECK(answers.error().code == ErrorCode::parse);
    CHECK(answers.error().message ==
          (drop == 1 ? "rv why: 1 answers to 2 commands" : "rv why: 3 answers to 2 commands"));
    CHECK(r.round_trips() == 1);
  }
}

TEST_CASE("typed batch: an empty range reads as no answers, and an empty batch costs no round trip")
{
  LocalRunner r;
  Batch batch("test");
  const auto none = batch.add(std::vector<Command>{});
  const auto one = batch.add(sh("echo one"));
  auto answers = batch.run(r);
  REQUIRE(answers);
  CHECK((*answers)[none].empty());
  CHECK((*answers)[one].out == "one\n");

  Batch nothing("empty");
  const int before = r.round_trips();
  auto no_answers = nothing.run(r);
  REQUIRE(no_answers);
  CHECK(r.round_trips() == before);
}
