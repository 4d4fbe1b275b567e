// The watchdog's samples as rv reads them: parsing, the idle / flat / hang verdict (a pure
// function of the samples), the read command's output split by request and node.

#include "app/request/watchdog_samples.hpp"

#include "tests/fakes/fake_runner.hpp"

#include <doctest/doctest.h>

#include <fmt/format.h>

using namespace rv;
using namespace rv::app;

namespace {

// `n` samples of job `job` every `step` s from `t0`, each with `util`/`mem`/`log`.
std::string lines(int n, std::int64_t t0, std::int64_t step, const std::string& util, const std::string& mem = "5,5",
                  int log = 100, const std::string& job = "241")
{
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += fmt::format("t={} job={} util={} mem={} log={}\n", t0 + i * step, job, util, mem, log);
  }
  return out;
}

std::map<std::string, std::vector<WatchdogSample>> one(const std::string& node, const std::string& text)
{
  return {{node, parse_samples(text)}};
}

} // namespace

TEST_CASE("watchdog samples: sample lines are parsed, broken, cut-off and foreign lines are skipped")
{
  auto s = parse_samples("t=100 job=241 util=0,35 mem=12,40110 log=2048\n"
                         "t=160 job=241 util=- mem=- log=2048\n"
                         "t=220 job=241 util=?,7 mem=?,1 log=9 extra=1\n"
                         "garbage line\n"
                         "t=x job=241 util=0 mem=0 log=0\n"
                         "t=280 job=241 util=0,a mem=0 log=0\n"
                         "t=300 job=241 util=0,0 mem=0,0 lo");
  REQUIRE(s.size() == 3);
  CHECK(s[0].t == 100);
  CHECK(s[0].job == "241");
  CHECK(s[0].util == std::vector<std::optional<int>>{0, 35});
  CHECK(s[0].mem[1] == 40110);
  CHECK(s[0].log_bytes == 2048);
  CHECK(s[0].read);
  CHECK_FALSE(s[1].read); // nvidia-smi failed or hung
  CHECK(s[1].util.empty());
  CHECK_FALSE(s[2].util[0]);
  CHECK(s[2].util[1] == 7);
  CHECK(parse_samples("").empty());
}

TEST_CASE("watchdog samples: every GPU at 0 % for 9 minutes is idle 9m, under 5 intervals it is not shown")
{
  auto a = assess(one("a100-1", lines(10, 1000, 60, "0,0")), {"a100-1"}, "241", 60, false);
  REQUIRE(a.idle_s);
  CHECK(*a.idle_s == 540);
  CHECK(a.sampled_at == 1540);
  CHECK(a.nodes == 1);
  CHECK_FALSE(a.hang);
  CHECK(activity_text(a) == "idle 9m");
  CHECK(to_json(a)["idle_s"] == 540);
  CHECK(to_json(a)["text"] == "idle 9m");

  auto young = assess(one("a100-1", lines(4, 1000, 60, "0,0")), {"a100-1"}, "241", 60, false);
  CHECK_FALSE(young.idle_s);
  CHECK(activity_text(young).empty());
  CHECK(to_json(young)["idle_s"].is_null());
}

TEST_CASE("watchdog samples: the streak starts after the last busy sample, busy, unread or missing nodes are not idle")
{
  auto text = lines(5, 1000, 60, "0,80") + lines(6, 1300, 60, "0,0");
  auto a = assess(one("n1", text), {"n1"}, "241", 60, false);
  REQUIRE(a.idle_s);
  CHECK(*a.idle_s == 300);

  CHECK_FALSE(assess(one("n1", lines(10, 1000, 60, "0,1")), {"n1"}, "241", 60, false).idle_s);
  CHECK_FALSE(assess(one("n1", lines(10, 1000, 60, "-", "-")), {"n1"}, "241", 60, false).idle_s);
  CHECK_FALSE(assess(one("n1", lines(10, 1000, 60, "0,?")), {"n1"}, "241", 60, false).idle_s); // MIG: [N/A]
  // Another job's samples (a requeued segment, an earlier winner) do not count.
  auto other = assess(one("n1", lines(10, 1000, 60, "0", "0", 1, "999")), {"n1"}, "241", 60, false);
  CHECK(other.nodes == 0);
  CHECK_FALSE(other.idle_s);
  // Two nodes: one busy, or one without samples, or one whose sampler stopped long ago.
  std::map<std::string, std::vector<WatchdogSample>> two = {{"n1", parse_samples(lines(10, 1000, 60, "0"))},
                                                            {"n2", parse_samples(lines(10, 1000, 60, "40"))}};
  CHECK_FALSE(assess(two, {"n1", "n2"}, "241", 60, true).idle_s);
  CHECK_FALSE(assess(one("n1", lines(10, 1000, 60, "0")), {"n1", "n2"}, "241", 60, true).idle_s);
  two["n2"] = parse_samples(lines(10, 100, 60, "0"));
  CHECK_FALSE(assess(two, {"n1", "n2"}, "241", 60, true).idle_s);
  two["n2"] = parse_samples(lines(10, 1000, 60, "0"));
  CHECK(assess(two, {"n1", "n2"}, "241", 60, true).idle_s == 540);
}

TEST_CASE("watchdog samples: a multi-node job flat for 10 intervals is a hang?, flat single-node jobs are not")
{
  std::map<std::string, std::vector<WatchdogSample>> two = {
      {"n1", parse_samples(lines(3, 0, 60, "90", "7", 50) + lines(12, 180, 60, "100", "70000", 400))},
      {"n2", parse_samples(lines(15, 0, 60, "100", "70000", 400))}};
  auto a = assess(two, {"n1", "n2"}, "241", 60, true);
  REQUIRE(a.flat_s);
  CHECK(*a.flat_s == 660);
  CHECK(a.hang);
  CHECK_FALSE(a.idle_s);
  CHECK(activity_text(a) == "hang? 11m");
  CHECK_FALSE(assess(two, {"n1", "n2"}, "241", 60, false).hang);
  // The log grows: not flat.
  two["n2"] = parse_samples(lines(14, 0, 60, "100", "70000", 400) + lines(1, 840, 60, "100", "70000", 401));
  CHECK_FALSE(assess(two, {"n1", "n2"}, "241", 60, true).hang);
}

TEST_CASE("watchdog samples: a streak back to the oldest line read is shown with +, the samples' spacing wins")
{
  auto a = assess(one("n1", lines(k_samples_read, 0, 60, "0")), {"n1"}, "241", 60, false);
  CHECK(a.at_least);
  CHECK(activity_text(a) == "idle 3h59m+");
  // Sampled every 2 s (a test's watchdog_interval) while rv assumes 60: the spacing decides.
  auto fast = assess(one("n1", lines(8, 0, 2, "0")), {"n1"}, "241", 60, false);
  CHECK(fast.idle_s == 14);
}

TEST_CASE("watchdog samples: the read command and its output, split by watchdog directory and node")
{
  auto c = samples_command({"/home/u/.rv/requests/aa/watchdog", "/home/u/.rv/requests/bb/watchdog"});
  REQUIRE(c.argv.size() == 6);
  CHECK(c.argv[0] == "sh");
  CHECK(c.argv[2].find("tail -n 240") != std::string::npos);
  CHECK(c.argv[4] == "/home/u/.rv/requests/aa/watchdog");
  auto all = split_samples("==> /home/u/.rv/requests/aa/watchdog/a100-1.samples\n" + lines(2, 10, 60, "0") +
                           "==> /home/u/.rv/requests/aa/watchdog/a100-2.samples\n" + lines(3, 10, 60, "5") +
                           "==> /home/u/.rv/requests/bb/watchdog/v100-1.samples\n");
  REQUIRE(all.size() == 2);
  CHECK(all["/home/u/.rv/requests/aa/watchdog"]["a100-1"].size() == 2);
  CHECK(all["/home/u/.rv/requests/aa/watchdog"]["a100-2"].size() == 3);
  CHECK(all["/home/u/.rv/requests/bb/watchdog"]["v100-1"].empty());

  RequestRecord r;
  r.id = "aa";
  r.remote_root = "/home/u/.rv";
  r.winner = "s1";
  r.jobs.push_back({"s1",         "", "", "", 2, "241", "", slurm::JobState::running, "", "a100-[1-2]", {}, "", 0,
                    std::nullopt, "", 0,  0,  0, "",    0});
  CHECK(running_watchdog_dirs({r}) == std::vector<std::string>{"/home/u/.rv/requests/aa/watchdog"});
  auto act = activity_of(r, all, 60);
  REQUIRE(act);
  CHECK(act->nodes == 2);
  r.jobs[0].state = slurm::JobState::completed;
  CHECK(running_watchdog_dirs({r}).empty());
  CHECK_FALSE(activity_of(r, all, 60));
}

TEST_CASE("watchdog samples: why the watchdog ended a job, from its ended.<job id> file")
{
  RequestRecord r;
  r.id = "aa";
  r.remote_root = "/home/u/.rv";
  test::FakeRunner fake;
  fake.expect_prefix({"cat", "--", "/home/u/.rv/requests/aa/watchdog/ended.241"},
                     test::FakeRunner::reply(0, "95 every GPU at 0 % for 1805 s (--idle-timeout 1800s)\n"));
  fake.expect_prefix({"cat"}, test::FakeRunner::reply(1, "", "No such file"));
  fake.expect_prefix({"cat"}, test::FakeRunner::reply(0, "x y\n"));
  auto ended = read_watchdog_end(fake, r, "241");
  REQUIRE(ended);
  CHECK(ended->first == 95);
  CHECK(ended->second == "every GPU at 0 % for 1805 s (--idle-timeout 1800s)");
  CHECK_FALSE(read_watchdog_end(fake, r, "242"));
  CHECK_FALSE(read_watchdog_end(fake, r, "243"));
}
