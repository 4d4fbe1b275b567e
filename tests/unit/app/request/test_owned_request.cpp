// The request owner: every way out of the lifecycle saves the record, and the secrets file goes
// exactly when no job of the request can still read it.

#include "app/request/owned_request.hpp"
#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
using rv::test::FakeRunner;

namespace {

struct Store {
  std::filesystem::path dir;
  store::RecordStore requests;
  explicit Store(const char* name)
      : dir(std::filesystem::temp_directory_path() / fmt::format("rv-owned-{}-{}", name, ::getpid())),
        requests((std::filesystem::remove_all(dir), dir / "requests"))
  {}
  ~Store() { std::filesystem::remove_all(dir); }

  // The stored record `id`, read back.
  RequestRecord load(const std::string& id)
  {
    auto j = requests.read(id);
    REQUIRE(j);
    auto r = request_from_json(*j);
    REQUIRE(r);
    return *r;
  }
};

// A request in the store with one job in `job_state` and a secrets file on the cluster.
RequestRecord stored(Store& s, const std::string& id, const std::string& job_state)
{
  RequestRecord r;
  r.id = id;
  r.name = "rv-" + id;
  r.state = RequestState::won;
  r.secrets = {"HF_TOKEN"};
  r.secrets_file = "/home/alice/.rv/requests/" + id + "/env";
  auto& j = r.jobs.emplace_back();
  j.strategy_id = "s1";
  j.job_id = "41";
  j.state = slurm::parse_job_state(job_state);
  r.winner = "s1";
  REQUIRE(s.requests.create(r.id, to_json(r)));
  r.base = to_json(r);
  return r;
}

// The one command that deletes the secrets file.
bool is_removal(const std::vector<std::string>& argv)
{
  return argv.size() >= 4 && argv[3] == "rv-rm";
}

int removals(const FakeRunner& r)
{
  int n = 0;
  for (const auto& argv : r.seen()) {
    n += is_removal(argv) ? 1 : 0;
  }
  return n;
}

} // namespace

TEST_CASE("owned request: finish records the final state and removes the secrets file once")
{
  Store s("finish");
  FakeRunner cluster;
  cluster.expect(is_removal, FakeRunner::reply(0));
  {
    OwnedRequest owner(cluster, s.requests, stored(s, "aa000001", "RUNNING"));
    owner.rec.jobs[0].state = slurm::JobState::completed;
    owner.finish(RequestState::done);
    CHECK(owner.settled());
    owner.close(); // a second close sends nothing
  }
  CHECK(removals(cluster) == 1);
  CHECK(cluster.seen()[0].back() == "/home/alice/.rv/requests/aa000001/env");
  auto saved = s.load("aa000001");
  CHECK(saved.state == RequestState::done);
  CHECK(saved.jobs[0].state == slurm::JobState::completed);
  CHECK(saved.secrets_file.empty()); // recorded as gone
}

TEST_CASE("owned request: release leaves the secrets to the live jobs (rv run without -f)")
{
  Store s("release");
  FakeRunner cluster;
  {
    OwnedRequest owner(cluster, s.requests, stored(s, "aa000002", "PENDING"));
    owner.rec.state = RequestState::submitted;
    owner.release();
  } // the destructor adds nothing
  CHECK(cluster.seen().empty());
  auto saved = s.load("aa000002");
  CHECK(saved.state == RequestState::submitted);
  CHECK(saved.secrets_file == "/home/alice/.rv/requests/aa000002/env");
}

TEST_CASE("owned request: an early exit while a job runs saves the record and keeps its secrets")
{
  Store s("early-live");
  FakeRunner cluster;
  {
    OwnedRequest owner(cluster, s.requests, stored(s, "aa000003", "PENDING"));
    owner.rec.jobs[0].state = slurm::JobState::running; // seen by the last poll, then the follow failed
  }
  CHECK(cluster.seen().empty()); // a checkpoint job's next segment still reads the file
  auto saved = s.load("aa000003");
  CHECK(saved.jobs[0].state == slurm::JobState::running);
  CHECK(saved.state == RequestState::won); // not made final: `rv ps` settles it
  CHECK_FALSE(saved.secrets_file.empty());
}

TEST_CASE("owned request: an early exit after every job ended removes the secrets file")
{
  Store s("early-ended");
  FakeRunner cluster;
  cluster.expect(is_removal, FakeRunner::reply(0));
  {
    OwnedRequest owner(cluster, s.requests, stored(s, "aa000004", "RUNNING"));
    owner.rec.jobs[0].state = slurm::JobState::failed;
  }
  CHECK(removals(cluster) == 1);
  auto saved = s.load("aa000004");
  CHECK(saved.jobs[0].state == slurm::JobState::failed);
  CHECK(saved.secrets_file.empty());
}

TEST_CASE("owned request: a moved-from owner owns nothing, the new owner cleans up once")
{
  Store s("moved");
  FakeRunner cluster;
  cluster.expect(is_removal, FakeRunner::reply(0));
  {
    OwnedRequest first(cluster, s.requests, stored(s, "aa000005", "CANCELLED"));
    OwnedRequest second(std::move(first));
    CHECK(first.settled());
    CHECK_FALSE(second.settled());
  }
  CHECK(removals(cluster) == 1);
}

TEST_CASE("owned request: a removal the cluster refuses keeps the file's name in the record")
{
  Store s("refused");
  FakeRunner cluster;
  cluster.expect(is_removal, FakeRunner::reply(1, "", "rm: cannot remove: Read-only file system\n"));
  {
    OwnedRequest owner(cluster, s.requests, stored(s, "aa000006", "COMPLETED"));
    owner.finish(RequestState::done);
  }
  auto saved = s.load("aa000006");
  CHECK(saved.state == RequestState::done);
  CHECK(saved.secrets_file == "/home/alice/.rv/requests/aa000006/env"); // `rv ps` tries again
}

TEST_CASE("request states: each is stored by its name and read back, an unknown name is a bad record")
{
  for (auto s : {RequestState::submitting, RequestState::submitted, RequestState::won, RequestState::done,
                 RequestState::failed, RequestState::cancelled}) {
    CAPTURE(to_string(s));
    RequestRecord r;
    r.id = "aa000007";
    r.state = s;
    auto j = to_json(r);
    CHECK(j["state"] == std::string(to_string(s)));
    auto back = request_from_json(j);
    REQUIRE(back);
    CHECK(back->state == s);
    CHECK(is_final_state(s) == (s == RequestState::done || s == RequestState::failed || s == RequestState::cancelled));
  }
  nlohmann::json odd = {{"id", "aa000008"}, {"state", "paused"}};
  auto bad = request_from_json(odd);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("unknown state 'paused'") != std::string::npos);
  CHECK(ended_state(slurm::JobState::completed) == RequestState::done);
  CHECK(ended_state(slurm::parse_job_state("CANCELLED by 1000")) == RequestState::cancelled);
  CHECK(ended_state(slurm::JobState::timeout) == RequestState::failed);
}
