#include "slurm/table.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace rv::slurm;
using V = std::vector<std::string>;

TEST_CASE("parse_table reads fixed-width columns from the rule under the header")
{
  auto t = parse_table("Account    User\n---------- ----\n    acct_a  bob\n    acct_b\n", "", {"ACCOUNT"});
  CHECK(t.header == V{"ACCOUNT", "USER"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == V{"acct_a", "bob"});
  CHECK(t.rows[1].at(0) == "acct_b");
}

TEST_CASE("parse_table makes no cells past the end of a row, whatever the rule's width")
{
  // A rule of 200,000 columns gave every short row 200,000 empty cells: 2,000 rows asked for
  // about 13 GB.
  std::string text = "ACCOUNT   USER\n------- ---";
  for (int i = 0; i < 200'000; ++i) {
    text += " -";
  }
  text += "\n";
  for (int i = 0; i < 2'000; ++i) {
    text += "acct1   bob\n";
  }
  auto t = parse_table(text, "", {"ACCOUNT"});
  REQUIRE(t.rows.size() == 2'000);
  CHECK(t.rows[0] == V{"acct1", "bob"});
  CHECK(t.rows[1'999] == V{"acct1", "bob"});
}
