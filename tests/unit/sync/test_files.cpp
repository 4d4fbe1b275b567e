// File selection on real temporary projects: git and non-git, .rvignore, deletions, large files,
// symlinks; and the transfer plan that mirrors deletions.

#include "core/process/local_runner.hpp"
#include "core/process/shell.hpp"
#include "sync/files.hpp"
#include "sync/transfer.hpp"

#include "core/ssh/hold.hpp"
#include "unit/core/ssh/fake_holder.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace rv::sync;
namespace fs = std::filesystem;
using V = std::vector<std::string>;
using rv::proc::rsync_quote;

namespace {

struct TempProject {
  fs::path root;
  TempProject()
  {
    char tmpl[] = "/tmp/rv-sync-test.XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~TempProject()
  {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const std::string& rel, const std::string& text = "x") const
  {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
  int sh(const std::string& cmd) const
  {
    return std::system(("cd '" + root.string() + "' && " + cmd + " >/dev/null 2>&1").c_str());
  }
};

V paths(const FileSelection& sel)
{
  V out;
  for (const auto& e : sel.entries) {
    out.push_back(e.path);
  }
  return out;
}

} // namespace

namespace {

// The connection rsync is given: the SshOptions rv's own session takes (core/ssh/options.hpp).
rv::proc::SshOptions target(std::string destination, std::string ssh_config, std::string identity_file,
                            std::string known_hosts, long connect_timeout_s, std::string known_hosts_fallback)
{
  rv::proc::SshOptions o;
  o.destination = std::move(destination);
  o.ssh_config = std::move(ssh_config);
  o.identity_file = std::move(identity_file);
  o.known_hosts = std::move(known_hosts);
  o.connect_timeout = std::chrono::seconds(connect_timeout_s);
  o.known_hosts_fallback = std::move(known_hosts_fallback);
  return o;
}

} // namespace

TEST_CASE("sync: a non-git project sends everything minus the default ignores, .gitignore and .rvignore")
{
  TempProject p;
  p.write("train.py");
  p.write("src/model.py");
  p.write("__pycache__/model.cpython-311.pyc");
  p.write("src/__pycache__/x.pyc");
  p.write(".venv/bin/python");
  p.write("node_modules/x/index.js");
  p.write(".git-not-a-repo.txt");
  p.write("checkpoints/step1.pt");
  p.write("notes.log");
  p.write(".gitignore", "*.log\n");
  p.write(".rvignore", "checkpoints/\n");
  rv::proc::LocalRunner local;
  auto sel = list_project_files(p.root, local, {});
  REQUIRE(sel);
  CHECK_FALSE(sel->git);
  CHECK(paths(*sel) == V{".git-not-a-repo.txt", ".gitignore", "src/model.py", "train.py"});
}

TEST_CASE("sync: a git project sends tracked plus untracked-not-ignored files, minus .rvignore, deleted files drop out")
{
  TempProject p;
  p.write("train.py");
  p.write("old.py");
  p.write("data/big.bin");
  p.write(".gitignore", "data/\n");
  p.write(".rvignore", "docs/\n");
  p.write("docs/paper.pdf");
  REQUIRE(p.sh("git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm init") == 0);
  p.write("new_untracked.py");
  fs::remove(p.root / "old.py"); // tracked, deleted, not `git rm`ed: the original's rsync exit 23
  rv::proc::LocalRunner local;
  auto sel = list_project_files(p.root, local, {});
  REQUIRE(sel);
  CHECK(sel->git);
  CHECK(paths(*sel) == V{".gitignore", "new_untracked.py", "train.py"});
}

TEST_CASE("sync: rv-outputs/ at the project's top (where rv sync pull puts outputs) is never sent")
{
  TempProject p;
  p.write("train.py");
  p.write("rv-outputs/rv-1-45/out.txt");
  p.write("src/rv-outputs/mine.txt"); // only the top-level one is rv's
  rv::proc::LocalRunner local;
  auto sel = list_project_files(p.root, local, {});
  REQUIRE(sel);
  CHECK(paths(*sel) == V{"src/rv-outputs/mine.txt", "train.py"});
  REQUIRE(p.sh("git init -q") == 0);        // in a git project too (git does not list ignored files, but
  p.write("rv-outputs/.gitignore", "!*\n"); // a .gitignore that lets them through changes nothing)
  auto in_git = list_project_files(p.root, local, {});
  REQUIRE(in_git);
  CHECK(in_git->git);
  CHECK(paths(*in_git) == V{"src/rv-outputs/mine.txt", "train.py"});
}

TEST_CASE("sync: large files are skipped with a reason, symlinks are kept only inside the project")
{
  TempProject p;
  p.write("small.py", "print(1)\n");
  p.write("weights.bin", std::string(2048, 'w'));
  p.write("cfg/base.yaml");
  fs::create_symlink("cfg/base.yaml", p.root / "link.yaml");
  fs::create_symlink("../../etc/passwd", p.root / "cfg/escape");
  fs::create_symlink("/etc/hostname", p.root / "abs");
  rv::proc::LocalRunner local;
  SelectOptions opts;
  opts.max_file_bytes = 1024;
  auto sel = list_project_files(p.root, local, opts);
  REQUIRE(sel);
  CHECK(paths(*sel) == V{"cfg/base.yaml", "link.yaml", "small.py"});
  REQUIRE(sel->entries[1].type == EntryType::symlink);
  CHECK(sel->entries[1].link_target == "cfg/base.yaml");
  V skipped;
  for (const auto& s : sel->skipped) {
    skipped.push_back(s.path);
  }
  CHECK(skipped == V{"abs", "cfg/escape", "weights.bin"});
  CHECK(sel->skipped[2].why.find("sync_max_file_size") != std::string::npos);
}

TEST_CASE("sync: the transfer plan sends new and changed files and mirrors deletions")
{
  std::vector<LocalEntry> local = {
      {"a.py", EntryType::file, 10, 100, 0644, ""},      {"pkg/b.py", EntryType::file, 20, 200, 0644, ""},
      {"pkg/new.py", EntryType::file, 5, 300, 0755, ""}, {"link", EntryType::symlink, 0, 0, 0777, "a.py"},
      {"was_dir", EntryType::file, 1, 1, 0644, ""},
  };
  std::vector<RemoteEntry> remote = {
      {"a.py", 'f', 10, 100, 0644, ""},                                          // unchanged
      {"pkg", 'd', 4096, 1, 0755, ""},     {"pkg/b.py", 'f', 20, 199, 0644, ""}, // older mtime: changed
      {"link", 'l', 4, 1, 0777, "b.py"},                                         // other target: changed
      {"gone.py", 'f', 1, 1, 0644, ""},                                          // deleted locally
      {"olddir", 'd', 4096, 1, 0755, ""},  {"olddir/x.py", 'f', 1, 1, 0644, ""}, // deleted locally, with its directory
      {"was_dir", 'd', 4096, 1, 0755, ""},                                       // now a file locally
      {"was_dir/y", 'f', 1, 1, 0644, ""},
  };
  auto plan = plan_transfer(local, remote);
  V send;
  for (const auto& e : plan.send) {
    send.push_back(e.path);
  }
  CHECK(send == V{"pkg/b.py", "pkg/new.py", "link", "was_dir"});
  CHECK(plan.send_bytes == 26);
  CHECK(plan.unchanged == 1);
  CHECK(plan.remove == V{"gone.py", "olddir/x.py", "was_dir/y"});
  CHECK(plan.remove_trees == V{"was_dir"});
  CHECK(plan.remove_dirs == V{"olddir"});
  CHECK(plan.make_dirs.empty());
  // An empty remote: everything is sent, directories made.
  auto fresh = plan_transfer(local, {});
  CHECK(fresh.send.size() == local.size());
  CHECK(fresh.make_dirs == V{"pkg"});
}

TEST_CASE("sync: the remote manifest parses find's NUL-separated records")
{
  using namespace std::string_literals;
  auto out = "d\0"s
             "4096\0"s
             "1700000000.5\0"s
             "755\0"s
             "\0"s
             "src\0"s
             "f\0"s
             "12\0"s
             "1700000001.0000000000\0"s
             "644\0"s
             "\0"s
             "src/a b.py\0"s
             "l\0"s
             "4\0"s
             "1700000002.0\0"s
             "777\0"s
             "a.py\0"s
             "link\0"s;
  auto m = parse_manifest(out);
  REQUIRE(m);
  REQUIRE(m->size() == 3);
  CHECK((*m)[0].type == 'd');
  CHECK((*m)[1].path == "src/a b.py");
  CHECK((*m)[1].size == 12);
  CHECK((*m)[1].mtime_s == 1700000001);
  CHECK((*m)[1].mode == 0644);
  CHECK((*m)[2].link_target == "a.py");
  CHECK_FALSE(parse_manifest("f\0"s
                             "12\0"s));
  CHECK_FALSE(parse_manifest("f\0"s
                             "x\0"s
                             "1\0"s
                             "644\0"s
                             "\0"s
                             "p\0"s));
}

TEST_CASE("sync: rsync reaches the cluster with rv's SSH settings")
{
  auto t = target("ana@login.hpc.edu:2200", "/home/ana/.ssh/config", "/home/ana/.ssh/id_ed25519", "/tmp/kh", 15, "");
  auto ssh = rsync_ssh_command(t);
  REQUIRE(ssh);
  CHECK(*ssh == "ssh -F /home/ana/.ssh/config -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=15 -i "
                "/home/ana/.ssh/id_ed25519 -o UserKnownHostsFile=/tmp/kh -p 2200");
  CHECK(*rsync_remote_spec(t, "/x/") == "ana@login.hpc.edu:/x/");
  auto alias = target("rvtb", "", "", "", 5, "");
  CHECK(*rsync_ssh_command(alias) == "ssh -F none -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=5");
  CHECK(*rsync_remote_spec(alias, "/x") == "rvtb:/x");
  CHECK(*rsync_remote_spec(rv::proc::SshOptions{}, "/x") == "/x");
  CHECK_FALSE(rsync_ssh_command(target("bad host", "", "", "", 5, "")));
  // rv init's known_hosts (the config file's) is read beside the alias's own UserKnownHostsFile,
  // never instead of it (third UX review N8); --known-hosts still replaces it.
  auto pinned = target("rvtb2", "/cfg", "", "", 5, "/home/ana/.ssh/known hosts");
  CHECK(*rsync_ssh_command(pinned) == "ssh -F /cfg -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=5 "
                                      "-o 'GlobalKnownHostsFile=/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2 "
                                      "\"/home/ana/.ssh/known hosts\"'");
  pinned.known_hosts = "/tmp/kh";
  CHECK(*rsync_ssh_command(pinned) == "ssh -F /cfg -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=5 "
                                      "-o UserKnownHostsFile=/tmp/kh");
}

TEST_CASE("sync: rsync's -e words are quoted for rsync's own splitter, so any path reaches ssh intact")
{
  CHECK(rsync_quote("plain") == "plain");
  CHECK(rsync_quote("a b") == "'a b'");
  CHECK(rsync_quote("it's") == "'it''s'");
  CHECK(rsync_quote("") == "''");
  auto t = target("rvtb", "/cfg/it's here/config", "/keys/a'b/key", "", 5, "");
  REQUIRE(rsync_ssh_command(t));
  CHECK(*rsync_ssh_command(t) == "ssh -F '/cfg/it''s here/config' -o BatchMode=yes -o StrictHostKeyChecking=yes "
                                 "-o ConnectTimeout=5 -i '/keys/a''b/key'");
  // The real rsync splits it back into the same words: a stand-in "ssh" at a path with a quote
  // and a space records the argv rsync gives it.
  if (!rv::proc::on_path("rsync")) {
    MESSAGE("SKIP: rsync is not installed");
    return;
  }
  const auto dir = fs::temp_directory_path() / ("rv-rsync-q-" + std::to_string(::getpid())) / "it's here";
  fs::create_directories(dir);
  const auto fake = dir / "fake ssh";
  const auto log = dir / "argv";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >\"" << log.string() << "\"\nexit 1\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  rv::proc::LocalRunner local;
  rv::proc::Command c;
  c.argv = {"rsync", "-e", rsync_quote(fake.string()) + " -i " + rsync_quote("/keys/a'b c/key"), "/etc/hostname",
            "host:/tmp/x"};
  auto out = local.run(c);
  REQUIRE(out);
  CHECK(out->err.find("Missing trailing") == std::string::npos);
  std::ifstream in(log);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  CHECK(first == "-i");
  CHECK(second == "/keys/a'b c/key");
  fs::remove_all(dir.parent_path());
}

TEST_CASE("sync: rsync's real splitter hands ssh every path intact, and ssh -G shows the user's config cannot "
          "weaken host-key checks")
{
  std::string real_ssh;
  for (const char* p : {"/usr/bin/ssh", "/bin/ssh", "/usr/local/bin/ssh"}) {
    if (::access(p, X_OK) == 0) {
      real_ssh = p;
      break;
    }
  }
  if (!rv::proc::on_path("rsync") || real_ssh.empty()) {
    MESSAGE("SKIP: rsync or ssh is not installed");
    return;
  }
  const auto base = fs::temp_directory_path() / ("rv-rsync-e-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const auto bin = base / "bin";
  const auto odd = base / "it's \"quoted\"  dir";
  fs::create_directories(bin);
  fs::create_directories(odd);
  // A user config that turns every check off; rv's -o options must win over it.
  const auto config = odd / "ssh config";
  std::ofstream(config) << "Host rvtb\n  HostName 127.0.0.1\n  StrictHostKeyChecking no\n"
                           "  UserKnownHostsFile /dev/null\n  BatchMode no\n";
  const auto key = odd / "key 'a' \"b\"";
  std::ofstream(key) << "";
  const auto known_hosts = odd / "known_hosts ''\"\"";
  std::ofstream(known_hosts) << "";
  const auto argv_log = base / "argv";
  const auto g_log = base / "ssh-G";
  {
    // The "ssh" rsync runs: records its argv, then asks the real ssh for the effective config.
    std::ofstream f(bin / "ssh");
    f << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >'" << argv_log.string() << "'\n"
      << real_ssh << " -G \"$@\" >'" << g_log.string() << "' 2>&1\nexit 1\n";
  }
  fs::permissions(bin / "ssh", fs::perms::owner_all);
  auto t = target("rvtb", config.string(), key.string(), known_hosts.string(), 5, "");
  auto ssh = rsync_ssh_command(t);
  REQUIRE(ssh);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", (bin.string() + ":" + old_path).c_str(), 1);
  rv::proc::LocalRunner local;
  rv::proc::Command c;
  c.argv = {"rsync", "-e", *ssh, "/etc/hostname", "rvtb:/tmp/x"};
  c.timeout = std::chrono::seconds(30);
  auto out = local.run(c);
  ::setenv("PATH", old_path.c_str(), 1);
  REQUIRE(out);
  CHECK(out->err.find("Missing trailing") == std::string::npos);
  std::ifstream in(argv_log);
  V words;
  for (std::string line; std::getline(in, line);) {
    words.push_back(line);
  }
  const V expected = {"-F",  config.string(),
                      "-o",  "BatchMode=yes",
                      "-o",  "StrictHostKeyChecking=yes",
                      "-o",  "ConnectTimeout=5",
                      "-i",  key.string(),
                      "-o",  "UserKnownHostsFile=" + rv::proc::ssh_option_quote(known_hosts.string()),
                      "rvtb"};
  REQUIRE(words.size() > expected.size());
  CHECK(V(words.begin(), words.begin() + static_cast<long>(expected.size())) == expected);
  std::ifstream g(g_log);
  std::string effective((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  CAPTURE(effective);
  CHECK(effective.find("\nstricthostkeychecking true\n") != std::string::npos);
  CHECK(effective.find("\nbatchmode yes\n") != std::string::npos);
  CHECK(effective.find("\nhostname 127.0.0.1\n") != std::string::npos); // the config is read
  // ssh read back the same single files rv uses: not split at blanks, quotes kept.
  CHECK(effective.find("\nuserknownhostsfile " + known_hosts.string() + "\n") != std::string::npos);
  CHECK(effective.find("\nidentityfile " + key.string() + "\n") != std::string::npos);
  fs::remove_all(base);
}

TEST_CASE("sync: rsync finds the held connection by the very options SshRunner holds with, ssh_dir included")
{
  char root_template[] = "/tmp/rv-rsync-hold-XXXXXX";
  REQUIRE(::mkdtemp(root_template) != nullptr);
  const std::string root = root_template;
  auto o = target("rvtest@127.0.0.1:1", "", "", "", 5, "");
  o.runtime_dir = root + "/run";
  o.ssh_dir = root + "/dotssh"; // a field rsync's old copy of the identity lacked
  o.persist = std::chrono::minutes(30);
  auto socket = rv::proc::hold::socket_path(o); // where SshRunner's held connection listens
  REQUIRE(socket);
  {
    rv::test::FakeHolder holder({rv::test::FakeHolder::Answer::ok}, *socket);
    auto relay = rsync_ssh_command(o);
    REQUIRE(relay);
    CHECK(relay->find("--internal-ssh-relay") != std::string::npos);
    CHECK(relay->find(*socket) != std::string::npos);
    CHECK(holder.hellos >= 1);
    // Another ssh_dir is another connection: not this holder's, so rsync logs in with ssh.
    auto other = o;
    other.ssh_dir = root + "/elsewhere";
    auto plain = rsync_ssh_command(other);
    REQUIRE(plain);
    CHECK(plain->starts_with("ssh -F none "));
  }
  std::filesystem::remove_all(root);
}
