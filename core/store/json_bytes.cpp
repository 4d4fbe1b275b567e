#include "core/store/json_bytes.hpp"

#include <fmt/format.h>

namespace rv::store {
namespace {

constexpr std::string_view k_bytes_key = "rv:bytes";

std::string to_hex(std::string_view s)
{
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    out += digits[c >> 4];
    out += digits[c & 0xF];
  }
  return out;
}

int hex_value(char c)
{
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

bool from_hex(std::string_view hex, std::string& out)
{
  if (hex.size() % 2 != 0) {
    return false;
  }
  out.clear();
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]);
    const int lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      return false;
    }
    out += static_cast<char>((hi << 4) | lo);
  }
  return true;
}

// Copies `doc` with every non-UTF-8 string wrapped; false on a non-UTF-8 object key.
bool wrap(const nlohmann::json& doc, nlohmann::json& out)
{
  if (doc.is_string()) {
    const auto& s = doc.get_ref<const std::string&>();
    out = valid_utf8(s) ? doc : nlohmann::json{{k_bytes_key, to_hex(s)}};
    return true;
  }
  if (doc.is_array()) {
    out = nlohmann::json::array();
    for (const auto& v : doc) {
      nlohmann::json w;
      if (!wrap(v, w)) {
        return false;
      }
      out.push_back(std::move(w));
    }
    return true;
  }
  if (doc.is_object()) {
    out = nlohmann::json::object();
    for (const auto& [k, v] : doc.items()) {
      if (!valid_utf8(k)) {
        return false;
      }
      if (!wrap(v, out[k])) {
        return false;
      }
    }
    return true;
  }
  out = doc;
  return true;
}

// Turns {"rv:bytes": hex} back into strings, in place; false on a malformed wrapper.
bool unwrap(nlohmann::json& doc)
{
  if (doc.is_object()) {
    if (doc.size() == 1 && doc.contains(k_bytes_key)) {
      const auto& hex = doc[k_bytes_key];
      std::string bytes;
      if (!hex.is_string() || !from_hex(hex.get_ref<const std::string&>(), bytes)) {
        return false;
      }
      doc = std::move(bytes);
      return true;
    }
    for (auto& [k, v] : doc.items()) {
      if (!unwrap(v)) {
        return false;
      }
    }
  } else if (doc.is_array()) {
    for (auto& v : doc) {
      if (!unwrap(v)) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

bool valid_utf8(std::string_view s)
{
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + len > s.size()) {
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

Result<std::string> dump_lossless(const nlohmann::json& doc)
{
  nlohmann::json wrapped;
  if (!wrap(doc, wrapped)) {
    return fail(ErrorCode::generic, "a JSON object key is not valid UTF-8");
  }
  return wrapped.dump(2) + "\n";
}

Result<nlohmann::json> parse_lossless(std::string_view text)
{
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    return fail(ErrorCode::parse, "not valid JSON");
  }
  if (!unwrap(doc)) {
    return fail(ErrorCode::parse, fmt::format("a malformed \"{}\" value", k_bytes_key));
  }
  return doc;
}

std::string dump_for_display(const nlohmann::json& doc, int indent)
{
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace rv::store
