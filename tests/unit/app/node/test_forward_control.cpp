// The running forwards as `rv forward --list/--stop` and a new forward see them
// (app/node/forward_control.hpp): a dead forward's record is pruned, never signalled; a held
// port is refused; stopping a port nothing listens on is a usage error.

#include "app/node/forward_control.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
namespace fs = std::filesystem;

TEST_CASE("forward control: a dead forward's record is pruned, a live one holds its port")
{
  const auto dir = fs::temp_directory_path() / ("rv-fwdctl-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  store::RecordStore requests(dir / "requests");
  auto store = forward_store(requests);
  CHECK(store.dir() == dir / "forwards");
  ForwardRecord dead, live;
  dead.local_port = 18001;
  dead.pid = ::getpid(); // a live pid, but nobody holds the lock: not a live forward
  live.local_port = 18002;
  live.pid = ::getpid();
  REQUIRE(save_forward(store, dead));
  REQUIRE(save_forward(store, live));
  auto lock = hold_forward_lock(store, live.local_port);
  REQUIRE(lock);

  auto running = live_forwards(store);
  REQUIRE(running);
  REQUIRE(running->size() == 1);
  CHECK(running->front().local_port == 18002);
  auto kept = load_forwards(store);
  REQUIRE(kept);
  CHECK(kept->size() == 1); // the dead one's record is gone

  CHECK(require_free_port(store, 18001));
  auto taken = require_free_port(store, 18002);
  REQUIRE_FALSE(taken);
  CHECK(taken.error().code == ErrorCode::usage);
  CHECK(taken.error().message.starts_with("local port 18002 already forwards"));

  int told = 0;
  auto none = stop_forwards(store, 18003, [&](const ForwardRecord&) { ++told; });
  REQUIRE_FALSE(none);
  CHECK(none.error().code == ErrorCode::usage);
  CHECK(none.error().message == "no forward listens on local port 18003");
  CHECK(told == 0);
  fs::remove_all(dir);
}
