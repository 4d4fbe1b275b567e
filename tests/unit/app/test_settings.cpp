// The typed settings the core reads (app/settings.hpp): read and checked once from the config.

#include "app/settings.hpp"
#include "core/ssh/hold_protocol.hpp"
#include "core/ssh/options.hpp"

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

TEST_CASE("settings: across clusters: hosts, SU weights and the gate's wait, each checked")
{
  Config config;
  auto defaults = app::read_settings(config, "/home/alice");
  REQUIRE(defaults);
  CHECK(defaults->hosts.empty());
  CHECK(defaults->su_weights.empty());
  CHECK(defaults->race_gate_wait_s == 300);

  REQUIRE(config.set("hosts", "rvtb, rvtb2", Origin::file));
  REQUIRE(config.set("su_weights", "rvtb=1,rvtb2=0.5", Origin::file));
  REQUIRE(config.set("race_gate_wait", "2m", Origin::file));
  auto s = app::read_settings(config, "/home/alice");
  REQUIRE(s);
  CHECK(s->hosts == std::vector<std::string>{"rvtb", "rvtb2"});
  CHECK(s->su_weights.at("rvtb2") == doctest::Approx(0.5));
  CHECK(s->su_weights.at("rvtb") == doctest::Approx(1.0));
  CHECK(s->race_gate_wait_s == 120);

  auto twice = app::parse_hosts("a,b,a");
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message.find("names a twice") != std::string::npos);
  CHECK_FALSE(app::parse_hosts("a,,b"));
  for (const char* bad : {"rvtb", "rvtb=", "=2", "rvtb=0", "rvtb=-1", "rvtb=x", "rvtb=1.5x"}) {
    auto w = app::parse_su_weights(bad);
    CHECK_MESSAGE(!w, bad);
    if (!w) {
      CHECK(w.error().hint.find("su_weights") != std::string::npos);
    }
  }
  REQUIRE(config.set("race_gate_wait", "5s", Origin::flag));
  auto short_wait = app::read_settings(config, "/home/alice");
  REQUIRE_FALSE(short_wait);
  CHECK(short_wait.error().message.find("race_gate_wait") != std::string::npos);
}

TEST_CASE("settings: rsync's connection and rv's own session are one identity, filled in one place")
{
  Config config;
  REQUIRE(config.set("host", "ana@login.hpc.edu:2200", Origin::file));
  REQUIRE(config.set("ssh_config", "~/.ssh/config", Origin::file));
  REQUIRE(config.set("identity_file", "~/.ssh/id_rv", Origin::environment));
  REQUIRE(config.set("known_hosts", "~/.config/rv/known_hosts", Origin::file));
  REQUIRE(config.set("connect_timeout", "20s", Origin::flag));
  auto settings = app::sync_settings(config, "/home/ana");
  REQUIRE(settings);
  auto session = proc::ssh_options_from(config, "/home/ana"); // what Context::ssh_options gives SshRunner
  REQUIRE(session);
  const auto& rsync = settings->push.ssh;
  CHECK(rsync.destination == "ana@login.hpc.edu:2200");
  CHECK(rsync.ssh_config == "/home/ana/.ssh/config");
  CHECK(rsync.identity_file == "/home/ana/.ssh/id_rv");
  CHECK(rsync.known_hosts.empty()); // the config file's known_hosts is a fallback (N8)
  CHECK(rsync.known_hosts_fallback == "/home/ana/.config/rv/known_hosts");
  CHECK(rsync.connect_timeout == std::chrono::seconds(20));
  // The held connection's socket is named after these fields: the same name from both.
  CHECK(proc::hold::socket_name(rsync) == proc::hold::socket_name(*session));
  CHECK(rsync.destination == session->destination);
  CHECK(rsync.known_hosts_fallback == session->known_hosts_fallback);
  CHECK(rsync.persist == session->persist);
}
