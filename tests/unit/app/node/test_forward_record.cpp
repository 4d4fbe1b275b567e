// Which forward records are live (app/forward.hpp): only a forward whose rv holds its lock. Before,
// a record left by a forward that died uncleanly (SIGKILL, OOM, reboot) named a pid that
// `kill(pid, 0)` found alive once the system gave it to another process: `rv forward --list`
// showed it and `rv forward --stop` sent that process SIGTERM (N6).

#include "app/node/forward.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
namespace fs = std::filesystem;

TEST_CASE("forward records: a stale pid is not a live forward, a held lock is")
{
  const auto dir = fs::temp_directory_path() / ("rv-fwd-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  store::RecordStore store(dir);
  // An unrelated live process of ours stands in for the pid the system reused.
  pid_t other = ::fork();
  REQUIRE(other >= 0);
  if (other == 0) {
    ::pause();
    ::_exit(0);
  }
  ForwardRecord f;
  f.local_port = 18888;
  f.remote_port = 8888;
  f.pid = other;
  REQUIRE(save_forward(store, f));
  CHECK_FALSE(forward_alive(store, f)); // alive pid, but nobody holds the forward's lock
  {
    auto lock = hold_forward_lock(store, f.local_port);
    REQUIRE(lock);
    CHECK(forward_alive(store, f));
  }
  CHECK_FALSE(forward_alive(store, f)); // released (and removed) as its holder ends
  CHECK_FALSE(fs::exists(dir / "port-18888.lock"));
  ::kill(other, SIGKILL);
  ::waitpid(other, nullptr, 0);
  fs::remove_all(dir);
}
