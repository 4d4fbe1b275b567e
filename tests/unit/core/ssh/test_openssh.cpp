#include "core/ssh/openssh.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace rv::proc;

TEST_CASE("parse_openssh_view keeps what libssh 0.10 does not read from ssh -G")
{
  const char* out = "user rvtest\n"
                    "hostname 127.0.0.1\n"
                    "identitiesonly yes\n"
                    "identityfile ~/.ssh/id_ed25519\n"
                    "identityfile /keys/site key\n"
                    "certificatefile ~/.ssh/site-cert.pub\n"
                    "gssapiauthentication yes\n"
                    "batchmode yes\n"
                    "proxyjump bastion,ana@inner:2200\n";
  auto view = parse_openssh_view(out, "/home/ana");
  CHECK(view.identities_only);
  CHECK(view.batch_mode); // no passphrase is asked
  CHECK(view.gssapi);
  CHECK(view.identity_files == std::vector<std::string>{"/home/ana/.ssh/id_ed25519", "/keys/site key"});
  CHECK(view.certificate_files == std::vector<std::string>{"/home/ana/.ssh/site-cert.pub"});
  CHECK(view.proxy_jump == "bastion,ana@inner:2200");

  view = parse_openssh_view("identitiesonly no\ngssapiauthentication no\nbatchmode no\nproxyjump none\n", "/home/ana");
  CHECK_FALSE(view.identities_only);
  CHECK_FALSE(view.batch_mode);
  CHECK_FALSE(view.gssapi);
  CHECK(view.proxy_jump.empty());
  CHECK(view.identity_files.empty());
}

TEST_CASE("config_needs_openssh: only a config that names what libssh 0.10 skips costs an ssh -G")
{
  CHECK_FALSE(config_needs_openssh("Host hpc\n  HostName login.hpc.edu\n  User ana\n  Port 2200\n"));
  CHECK(config_needs_openssh("Host hpc\n  IdentityFile ~/.ssh/hpc\n")); // hpc-cert.pub may be beside it
  CHECK_FALSE(config_needs_openssh(""));
  CHECK(config_needs_openssh("Host hpc\n  ProxyJump bastion\n"));
  CHECK(config_needs_openssh("Host *\n  IDENTITIESONLY yes\n"));
  CHECK(config_needs_openssh("Host hpc\n  certificatefile ~/.ssh/hpc-cert.pub\n"));
  CHECK(config_needs_openssh("Include ~/.ssh/config.d/*\n"));
  CHECK(config_needs_openssh("Match host *.edu\n  User ana\n"));
  CHECK(config_needs_openssh("Host kdc-site\n  GSSAPIAuthentication yes\n")); // libssh never tries Kerberos itself
  CHECK(config_needs_openssh("Host hpc\n  BatchMode yes\n"));                 // a key's passphrase is then not asked
}

TEST_CASE("proxy_jump_argv builds the jump as OpenSSH does: the last hop direct, the others through -J")
{
  JumpSpec spec{"b1,ana@b2:2200", "/cfg/config", "", "/tmp/rv-jump-1", "10.0.0.5", 22, std::chrono::seconds(15), ""};
  auto argv = proxy_jump_argv(spec);
  REQUIRE(argv);
  CHECK(*argv == std::vector<std::string>{"ssh", "-F", "/cfg/config", "-E", "/tmp/rv-jump-1", "-o", "ConnectTimeout=15",
                                          "-l", "ana", "-p", "2200", "-J", "b1", "-W", "[10.0.0.5]:22", "b2"});
  // One hop, an ssh:// hop, rv's own known_hosts, no config file.
  spec = {"ssh://bastion:2022", "", "/kh/known hosts", "", "login", 2222, std::chrono::seconds(5), ""};
  argv = proxy_jump_argv(spec);
  REQUIRE(argv);
  CHECK(*argv == std::vector<std::string>{"ssh", "-o", "UserKnownHostsFile=\"/kh/known hosts\"", "-o",
                                          "ConnectTimeout=5", "-p", "2022", "-W", "[login]:2222", "bastion"});
  spec.jump = "a,bad host";
  auto bad = proxy_jump_argv(spec);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("cannot read ProxyJump 'a,bad host'") != std::string::npos);
}

TEST_CASE("known_hosts_ssh_options: --known-hosts replaces the config's file, rv init's is read beside it (N8)")
{
  CHECK(known_hosts_ssh_options("", "").empty());
  CHECK(known_hosts_ssh_options("/kh/a", "/kh/b") == std::vector<std::string>{"-o", "UserKnownHostsFile=/kh/a"});
  CHECK(known_hosts_ssh_options("", "/kh/known hosts") ==
        std::vector<std::string>{
            "-o", "GlobalKnownHostsFile=/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2 \"/kh/known hosts\""});
  // The jump's ssh gets the same words.
  JumpSpec spec{"bastion", "", "", "", "login", 22, std::chrono::seconds(5), "/kh/pin"};
  auto argv = proxy_jump_argv(spec);
  REQUIRE(argv);
  CHECK(*argv == std::vector<std::string>{
                     "ssh", "-o", "GlobalKnownHostsFile=/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2 /kh/pin",
                     "-o", "ConnectTimeout=5", "-W", "[login]:22", "bastion"});
}

TEST_CASE("proxy_command_line survives libssh's % escapes and the user's shell")
{
  const std::vector<std::string> argv{"printf", "%s|", "50% it's"};
  const auto line = proxy_command_line(argv);
  CHECK(line.find("%%") != std::string::npos);
  // libssh turns `%%` into `%` and runs the line with $SHELL -c: do the same with sh.
  std::string unescaped;
  for (std::size_t i = 0; i < line.size(); ++i) {
    unescaped += line[i];
    if (line[i] == '%' && i + 1 < line.size() && line[i + 1] == '%') {
      ++i;
    }
  }
  std::string cmd = "/bin/sh -c '";
  for (char c : unescaped) {
    cmd += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  cmd += "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) {
    out.append(buf, n);
  }
  CHECK(::pclose(p) == 0);
  CHECK(out == "50% it's|");
}
