#include "core/base64.hpp"

namespace rv {
namespace {
constexpr std::string_view k_base64_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
} // namespace

std::string base64_encode(std::string_view data)
{
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t at) { return static_cast<unsigned>(static_cast<unsigned char>(data[at])); };
  for (; i + 3 <= data.size(); i += 3) {
    const unsigned v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += k_base64_alphabet[(v >> 18) & 63];
    out += k_base64_alphabet[(v >> 12) & 63];
    out += k_base64_alphabet[(v >> 6) & 63];
    out += k_base64_alphabet[v & 63];
  }
  if (const auto left = data.size() - i; left > 0) {
    const unsigned v = (byte(i) << 16) | (left == 2 ? byte(i + 1) << 8 : 0u);
    out += k_base64_alphabet[(v >> 18) & 63];
    out += k_base64_alphabet[(v >> 12) & 63];
    out += left == 2 ? k_base64_alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text)
{
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') {
      break;
    }
    const auto at = k_base64_alphabet.find(c);
    if (at == std::string_view::npos) {
      return std::nullopt;
    }
    bits = (bits << 6) | static_cast<unsigned>(at);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xffu));
    }
  }
  return out;
}

} // namespace rv
