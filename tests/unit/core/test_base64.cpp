#include "core/base64.hpp"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("base64: RFC 4648's vectors encode and decode, every byte round-trips")
{
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    CAPTURE(plain);
    CHECK(rv::base64_encode(plain) == coded);
    CHECK(rv::base64_decode(coded) == plain);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) {
    all.push_back(static_cast<char>(i));
  }
  CHECK(rv::base64_decode(rv::base64_encode(all)) == all);
  CHECK_FALSE(rv::base64_decode("Zm9v*"));
}
