#include "slurm/sinfo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace rv;
using namespace rv::slurm;

TEST_CASE("sinfo_argv asks for rv's unpadded pipe format")
{
  auto argv = sinfo_argv({"gpu", "debug"});
  CHECK(argv[0] == "sinfo");
  CHECK(argv[4] == "NodeList:|,Partition:|,StateLong:|,CPUs:|,CPUsState:|,Memory:|,AllocMem:|,Gres:|,GresUsed:|,"
                   "Features:|,Reason:");
  CHECK(argv.back() == "gpu,debug");
}

TEST_CASE("parse_sinfo reads rv's format and merges partitions per node")
{
  const char* text = "a100-1|gpu*|mixed|64|8/56/0/64|512000|64000|gpu:a100:4(S:0-1)|gpu:a100:1(IDX:0)|a100,ib|none\r\n"
                     "a100-1|debug|mixed|64|8/56/0/64|512000|64000|gpu:a100:4(S:0-1)|gpu:a100:1(IDX:0)|a100,ib|none\r\n"
                     "a100-2|gpu*|drained*|64|0/0/64/64|512000|0|gpu:a100:4|gpu:a100:0(IDX:N/A)|(null)|bad|gpu\n"
                     "cpu-1|cpu|idle|32|0/32/0/32|128000|0|(null)|(null)|(null)|none\n";
  auto rows = parse_sinfo(text);
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 4);
  CHECK((*rows)[0].default_partition);
  CHECK((*rows)[0].partition == "gpu");
  CHECK((*rows)[0].cpus_alloc == 8);
  CHECK((*rows)[2].reason == "bad|gpu"); // a '|' inside the last column survives
  auto nodes = nodes_from_sinfo(*rows);
  REQUIRE(nodes.has_value());
  REQUIRE(nodes->size() == 3);
  const auto& a = (*nodes)[0];
  CHECK(a.partitions == std::vector<std::string>{"gpu", "debug"});
  CHECK(a.gpus_total() == 4);
  CHECK(a.gpus_free() == 3);
  CHECK(a.usable);
  CHECK_FALSE((*nodes)[1].usable);
  CHECK((*nodes)[1].reason == "bad|gpu");
  CHECK((*nodes)[2].gpus.empty());
}

TEST_CASE("parse_sinfo_columns reads default tables and hostlists")
{
  const char* text = "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST \r\n"
                     "debug*       up    8:00:00      2    mix med[0104,0127] \r\n"
                     "long         up 28-00:00:0      0    n/a  \r\n";
  auto rows = parse_sinfo_columns(text, {SinfoField::partition, SinfoField::ignore, SinfoField::ignore,
                                         SinfoField::node_count, SinfoField::state, SinfoField::node});
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].node_count == 2);
  auto nodes = nodes_from_sinfo(*rows);
  REQUIRE(nodes.has_value());
  CHECK(nodes->size() == 2);
}

TEST_CASE("nodes_from_sinfo bounds the hosts of all rows together")
{
  // Each row is within the bound of one hostlist; 6 KB of them used to expand to 8.7 GB.
  // (A 381-byte fuzz input of such rows still took 11 s and 500 MB under a 1,000,000 bound.)
  std::string text;
  for (int i = 0; i < 3; ++i) {
    text += fmt::format("p{}n[0-49999]|gpu|idle|64|0/64/0/64|512000|0|gpu:a100:4|gpu:a100:0|(null)|none\n", i);
  }
  auto rows = parse_sinfo(text);
  REQUIRE(rows.has_value());
  auto nodes = nodes_from_sinfo(*rows);
  REQUIRE_FALSE(nodes);
  CHECK(nodes.error().code == ErrorCode::parse);
  CHECK(nodes.error().message == "sinfo lists more than 100000 hosts in all");
}

TEST_CASE("parse_sinfo: CPUs and memory past what any node has count as unknown")
{
  auto rows = parse_sinfo("n1|gpu|idle|2147483647|0/0/0/99999|9223372036854775807|1099511627777|gpu:a100:8|(null)|"
                          "(null)|none\n"
                          "n2|gpu|idle|64|8/56/0/64|1073741824|0|gpu:a100:8|(null)|(null)|none\n");
  REQUIRE(rows.has_value());
  CHECK((*rows)[0].cpus == 0);
  CHECK((*rows)[0].cpus_alloc == 0);
  CHECK((*rows)[0].mem_mb == 0);
  CHECK((*rows)[0].alloc_mem_mb == 0);
  CHECK((*rows)[1].cpus == 64);
  CHECK((*rows)[1].mem_mb == 1073741824);
}
