#include "slurm/hostlist.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace rv;
using namespace rv::slurm;
using V = std::vector<std::string>;

TEST_CASE("expand_hostlist handles ranges, padding, groups and several brackets")
{
  CHECK(*expand_hostlist("a100-[1-2]") == V{"a100-1", "a100-2"});
  CHECK(*expand_hostlist("gpu[01-03,07]") == V{"gpu01", "gpu02", "gpu03", "gpu07"});
  CHECK(*expand_hostlist("a[1-2],b3") == V{"a1", "a2", "b3"});
  CHECK(*expand_hostlist("n[1-2]-ib[3-4]") == V{"n1-ib3", "n1-ib4", "n2-ib3", "n2-ib4"});
  CHECK(*expand_hostlist("med[0105-0106,0136]") == V{"med0105", "med0106", "med0136"});
  CHECK(*expand_hostlist("3dgi[1-2],100plus") == V{"3dgi1", "3dgi2", "100plus"});
  CHECK(*expand_hostlist("node7") == V{"node7"});
  CHECK(expand_hostlist("(null)")->empty());
  CHECK(expand_hostlist("")->empty());
}

TEST_CASE("expand_hostlist rejects malformed lists")
{
  CHECK_FALSE(expand_hostlist("a[1-2").has_value());
  CHECK_FALSE(expand_hostlist("a[3-1]").has_value());
  CHECK_FALSE(expand_hostlist("a[x]").has_value());
  CHECK(expand_hostlist("r1i5n...").has_value()); // an edited name is still a name
  CHECK(expand_hostlist("a[1-2000000]").error().code == ErrorCode::parse);
}

TEST_CASE("compress_hostlist groups by prefix and padding and round-trips")
{
  CHECK(compress_hostlist({"gpu01", "gpu02", "gpu03", "gpu07", "login1"}) == "gpu[01-03,07],login1");
  CHECK(compress_hostlist({"a1"}) == "a1");
  CHECK(compress_hostlist({"head", "b2", "b1"}) == "head,b[1-2]");
  auto hosts = *expand_hostlist("ccc[0035-0036,0085-0090],golub[113-116]");
  CHECK(*expand_hostlist(compress_hostlist(hosts)) == hosts);
}

TEST_CASE("expand_hostlist refuses absurd lists before expanding them")
{
  auto error_of = [](std::string_view list) {
    auto r = expand_hostlist(list);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::parse);
    return r.error().message;
  };
  // The old guard multiplied without a check: (2^62 - 0) * 4 wrapped to 0 and passed.
  CHECK(error_of("n[0-4611686018427387904]x[0-3]") ==
        "number '4611686018427387904' in hostlist item 'n[0-4611686018427387904]x[0-3]' has more than 18 digits");
  // `++n` past INT64_MAX never ended.
  CHECK(error_of("n[9223372036854775807]") ==
        "number '9223372036854775807' in hostlist item 'n[9223372036854775807]' has more than 18 digits");
  CHECK(error_of("n[0-999999999999999999]") ==
        "range '0-999999999999999999' in hostlist item 'n[0-999999999999999999]' has more than 100000 hosts");
  CHECK(error_of("n[0-100000]") == "range '0-100000' in hostlist item 'n[0-100000]' has more than 100000 hosts");
  CHECK(error_of("n[0-999]x[0-99]y[0-1]") == "hostlist item 'n[0-999]x[0-99]y[0-1]' expands to more than 100000 hosts");
  // Many items, each within the limit, add up past it.
  std::string many;
  for (int i = 0; i < 11; ++i) {
    many += fmt::format("{}p{}[0-9999]", many.empty() ? "" : ",", i);
  }
  CHECK(error_of(many) == "hostlist item 'p10[0-9999]' expands to more than 100000 hosts");
  // A name no host can have: padding or a prefix of thousands of characters.
  CHECK(error_of(fmt::format("n[{}1-2]", std::string(5000, '0'))).ends_with("has more than 18 digits"));
  CHECK(error_of(std::string(300, 'n') + "[1-2]") ==
        fmt::format("a host name in hostlist item '{}...' is longer than 255 characters", std::string(60, 'n')));
  CHECK(error_of(std::string(256, 'n')) ==
        fmt::format("a host name in hostlist item '{}...' is longer than 255 characters", std::string(60, 'n')));
  CHECK(expand_hostlist(std::string(255, 'n'))->size() == 1);
  // Each bracket group is one level of recursion: 30,000 of them (90 KB) overflowed the stack.
  std::string groups = "n";
  for (int i = 0; i < 30'000; ++i) {
    groups += "[1]";
  }
  CHECK(error_of(groups) == fmt::format("hostlist item '{}...' has more than 16 bracket groups", groups.substr(0, 60)));
  CHECK(error_of(groups.substr(0, 1 + 17 * 3)) ==
        fmt::format("hostlist item '{}' has more than 16 bracket groups", groups.substr(0, 1 + 17 * 3)));
  CHECK(*expand_hostlist(groups.substr(0, 1 + 16 * 3)) == V{"n" + std::string(16, '1')});
}

TEST_CASE("expand_hostlist still expands large lists within the bounds")
{
  CHECK(expand_hostlist("n[0-99999]")->size() == 100'000);
  CHECK(expand_hostlist("n[0-999]x[0-99]")->size() == 100'000);
  CHECK(*expand_hostlist("n[999999999999999998-999999999999999999]") ==
        V{"n999999999999999998", "n999999999999999999"});
}
