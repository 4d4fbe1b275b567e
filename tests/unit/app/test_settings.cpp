// The typed settings the core reads (app/settings.hpp): read and checked once from the config.

#include "app/settings.hpp"

#include <doctest/doctest.h>

using namespace rv;

TEST_CASE("settings: typed from the layered config, checked once, with the key named on error")
{
  Config config;
  auto defaults = app::read_settings(config, "/home/alice");
  REQUIRE(defaults);
  CHECK(defaults->remote_root == config.get("remote_root"));
  CHECK(defaults->sync.deps_install == rv::sync::DepsInstall::login);
  CHECK(defaults->sync.snapshot_keep_s == 7 * 86400);
  CHECK(defaults->request_keep_s == 30 * 86400);

  REQUIRE(config.set("remote_root", "/scratch/alice/rv", Origin::flag));
  REQUIRE(config.set("sync_max_file_size", "2G", Origin::file));
  REQUIRE(config.set("identity_file", "~/.ssh/id_rv", Origin::environment));
  auto set = app::read_settings(config, "/home/alice");
  REQUIRE(set);
  CHECK(set->remote_root == "/scratch/alice/rv");
  CHECK(set->sync.select.max_file_bytes == 2048ull << 20);
  CHECK(set->sync.push.ssh.identity_file == "/home/alice/.ssh/id_rv"); // a local path: ~ is this machine's

  // A value of the wrong type never gets in (core/config.hpp checks every layer).
  auto bad = config.set("sync_transport", "ftp", Origin::file);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::config);
  CHECK(bad.error().message == "sync_transport 'ftp' is not auto, rsync or sftp");
  CHECK(config.get("sync_transport") == "auto");
}

TEST_CASE("settings: the transport and the deps mode are read once into their enums")
{
  Config config;
  REQUIRE(config.set("sync_transport", "sftp", Origin::file));
  REQUIRE(config.set("deps_install", "job", Origin::environment));
  auto set = app::read_settings(config, "/home/alice");
  REQUIRE(set);
  CHECK(set->sync.push.transport == rv::sync::Transport::sftp);
  CHECK(set->sync.deps_install == rv::sync::DepsInstall::job);
  for (const char* name : {"auto", "rsync", "sftp"}) {
    auto t = rv::sync::parse_transport(name);
    REQUIRE(t);
    CHECK(rv::sync::to_string(*t) == name);
  }
  for (const char* name : {"login", "job", "off"}) {
    auto d = rv::sync::parse_deps_install(name);
    REQUIRE(d);
    CHECK(rv::sync::to_string(*d) == name);
  }
  // A name the enum lacks never reaches the settings: the config refuses it when it is set.
  auto bad = config.set("deps_install", "later", Origin::flag);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("later") != std::string::npos);
  CHECK_FALSE(rv::sync::parse_deps_install("later"));
}
