#include "app/node/ssh_shell.hpp"
#include "core/process/local_runner.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <unistd.h>

using namespace rv;
using namespace rv::app;

namespace {

NodeTarget target()
{
  NodeTarget t;
  t.request_id = "3f9c02ab";
  t.job_id = "812";
  t.nodes = {"a100-1", "a100-2"};
  t.node_index = 1;
  t.node = "a100-2";
  t.address = "10.0.0.12";
  return t;
}

} // namespace

TEST_CASE("rv ssh: the step joins the job on its node, one word is a shell line, several an argv")
{
  auto t = target();
  CHECK(step_argv(t, {}) == std::vector<std::string>{"srun", "--jobid=812", "--overlap", "--nodes=1", "--ntasks=1",
                                                     "--nodelist=a100-2", "--pty", "bash", "-l"});
  CHECK(step_argv(t, {"nvidia-smi | head"}) == std::vector<std::string>{"srun", "--jobid=812", "--overlap", "--nodes=1",
                                                                        "--ntasks=1", "--nodelist=a100-2", "bash", "-c",
                                                                        "nvidia-smi | head"});
  CHECK(step_argv(t, {"echo", "a b", "$HOME"}).back() == "$HOME");
  CHECK(step_argv(t, {"echo", "a b", "$HOME"}).size() == 9);
}

namespace {

// What the step runs on the node: srun's argv less its own options (no --pty: a command).
std::vector<std::string> program_of(const std::vector<std::string>& argv)
{
  REQUIRE(argv.size() > 6);
  REQUIRE(argv[5].starts_with("--nodelist="));
  return {argv.begin() + 6, argv.end()};
}

// Runs the step's program here, as the node would.
rv::proc::Outcome run_here(const std::vector<std::string>& program)
{
  rv::proc::LocalRunner local;
  rv::proc::Command c;
  c.argv = program;
  c.timeout = std::chrono::seconds(20);
  auto o = local.run(c);
  REQUIRE(o.has_value());
  return *o;
}

} // namespace

TEST_CASE("rv ssh REQ -- CMD: in the job's directory, the command byte for byte (N6)")
{
  auto t = target();
  t.workdir = "/scratch/rv/snap/it's a dir";
  // Several words: an exact argv, quoted word by word after the cd.
  CHECK(program_of(step_argv(t, {"python3", "train.py", "a b", "$HOME"})) ==
        std::vector<std::string>{"bash", "-c",
                                 "cd -- '/scratch/rv/snap/it'\\''s a dir' || exit 1\n"
                                 "exec python3 train.py 'a b' '$HOME'"});
  // One word: the shell line, itself one quoted word of `bash -c`.
  CHECK(program_of(step_argv(t, {"python3 train.py | tee log"})) ==
        std::vector<std::string>{"bash", "-c",
                                 "cd -- '/scratch/rv/snap/it'\\''s a dir' || exit 1\n"
                                 "exec bash -c 'python3 train.py | tee log'"});
  // The shell: a login shell there, in a PTY.
  const auto shell = step_argv(t, {});
  CHECK(shell[6] == "--pty");
  CHECK(std::vector<std::string>(shell.begin() + 7, shell.end()) ==
        std::vector<std::string>{"bash", "-c", "cd -- '/scratch/rv/snap/it'\\''s a dir' || exit 1\nexec bash -l"});
  // A request without a directory of its own (nothing synced, no --workdir): as before.
  t.workdir.clear();
  CHECK(program_of(step_argv(t, {"echo", "x"})) == std::vector<std::string>{"echo", "x"});
}

TEST_CASE("rv ssh REQ -- CMD: run here, the program starts in the directory with every byte intact")
{
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("rv-ssh-wd-" + std::to_string(::getpid())) / "it's a $dir\\ü";
  fs::create_directories(dir);
  auto t = target();
  t.workdir = dir.string();
  // An argv whose words a shell would change if any quoting went wrong.
  const std::vector<std::string> words = {"a b", "$HOME", "it's", "ü\\n", "*", "\"q\"", "x;y", ""};
  std::vector<std::string> argv = {"sh", "-c", "pwd; printf '%s|' \"$@\"", "sh"};
  argv.insert(argv.end(), words.begin(), words.end());
  auto o = run_here(program_of(step_argv(t, argv)));
  CHECK(o.status() == 0);
  CHECK(o.out == dir.string() + "\na b|$HOME|it's|ü\\n|*|\"q\"|x;y||");
  // A shell line: the shell reads it as typed, in the directory.
  o = run_here(program_of(step_argv(t, {"pwd; echo 'a  b' $((1 + 2)) >&2; exit 7"})));
  CHECK(o.status() == 7);
  CHECK(o.out == dir.string() + "\n");
  CHECK(o.err == "a  b 3\n");
  // A directory that is gone: exit 1, and the command never runs elsewhere.
  t.workdir = (dir / "gone").string();
  o = run_here(program_of(step_argv(t, {"echo", "ran"})));
  CHECK(o.status() == 1);
  CHECK(o.out.find("ran") == std::string::npos);
  CHECK(o.err.find("gone") != std::string::npos);
  fs::remove_all(dir.parent_path());
}

TEST_CASE("rv ssh --print-config: the login hop from where() and ProxyJump")
{
  auto hop = login_hop("ssh rvtest@127.0.0.1:2222", "rvtb");
  CHECK(hop.user == "rvtest");
  CHECK(hop.host == "127.0.0.1");
  CHECK(hop.port == 2222);
  CHECK(proxy_jump(hop) == "rvtb"); // an alias of the user's ssh config
  CHECK(proxy_jump(login_hop("ssh rvtest@127.0.0.1:2222", "rvtest@127.0.0.1:2222")) == "rvtest@127.0.0.1:2222");
  CHECK(proxy_jump(login_hop("ssh me@login.hpc.edu:22", "login.hpc.edu")) == "me@login.hpc.edu");
  auto v6 = login_hop("ssh me@[::1]:2200", "me@[::1]:2200");
  CHECK(v6.host == "[::1]");
  CHECK(v6.port == 2200);
  CHECK(proxy_jump(v6) == "me@[::1]:2200");
  auto local = login_hop("local", "");
  CHECK(local.host.empty());
}

TEST_CASE("rv ssh --print-config: the block")
{
  auto block = ssh_config_block(target(), login_hop("ssh rvtest@127.0.0.1:2222", "rvtb"));
  REQUIRE(block);
  CHECK(*block == "# BEGIN rv\n"
                  "# request 3f9c02ab, job 812 on a100-2 (rv ssh --print-config --install rewrites this block)\n"
                  "Host rv-3f9c02ab\n"
                  "  HostName 10.0.0.12\n"
                  "  User rvtest\n"
                  "  ProxyJump rvtb\n"
                  "# END rv\n");
  // rv on the login node: no hop
  auto here = ssh_config_block(target(), login_hop("local", ""));
  REQUIRE(here);
  CHECK(here->find("ProxyJump") == std::string::npos);
  CHECK(ssh_config_block(target(), login_hop("ssh me@[::1]:2200", "me@[::1]:2200")));
}

// N13: NodeAddr, the node name and the user were written into ~/.ssh/config unchecked; a line break
// or a blank in one of them would have added a directive (ProxyCommand runs a command).
TEST_CASE("rv ssh --print-config: a node address, node, user or login host that is no plain name is refused")
{
  auto t = target();
  t.address = "10.0.0.12\n  ProxyCommand sh -c 'id'";
  auto bad = ssh_config_block(t, login_hop("ssh rvtest@127.0.0.1:2222", "rvtb"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("the node address") != std::string::npos);
  CHECK(bad.error().message.find('\n') == std::string::npos); // shown escaped
  t = target();
  t.node = "a100 2";
  CHECK_FALSE(ssh_config_block(t, login_hop("local", "")));
  CHECK_FALSE(ssh_config_block(target(), login_hop("ssh rv test@127.0.0.1:2222", "")));
  CHECK_FALSE(ssh_config_block(target(), login_hop("ssh rvtest@host\tx", "")));
  t = target();
  t.address = "fe80::1"; // IPv6 NodeAddr
  CHECK(ssh_config_block(t, login_hop("local", "")));
}

TEST_CASE("rv ssh --print-config --install: the managed block is replaced, every other byte kept")
{
  const std::string block = "# BEGIN rv\nHost rv-1\n# END rv\n";
  CHECK(*with_managed_block("", block) == block);
  CHECK(*with_managed_block("Host a\n  User x", block) == "Host a\n  User x\n" + block);
  const std::string before = "Host a\r\n  User x\n\n# BEGIN rv\nHost rv-old\n  HostName n1\n# END rv\nHost b # END rv\n"
                             "  Port 2\n";
  auto replaced = with_managed_block(before, block);
  REQUIRE(replaced.has_value());
  CHECK(*replaced == "Host a\r\n  User x\n\n" + block + "Host b # END rv\n  Port 2\n");
  // idempotent
  CHECK(*with_managed_block(*replaced, block) == *replaced);
  // markers must be whole lines
  CHECK(*with_managed_block("#  # BEGIN rv later\n", block) == "#  # BEGIN rv later\n" + block);
  // an unfinished block is refused
  auto broken = with_managed_block("# BEGIN rv\nHost x\n", block);
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().message.find("without its '# END rv'") != std::string::npos);
}
