#pragma once
// Base64 (RFC 4648, the standard alphabet with `=` padding), written once: SSH certificates' blobs
// are decoded with it, and a small push's files travel in it on the apply's stdin (sync/transfer.cpp).

#include <optional>
#include <string>
#include <string_view>

namespace rv {

// `data` in base64, padded, on one line.
std::string base64_encode(std::string_view data);

// The bytes of `text` (padding optional; reading stops at the first `=`), or nullopt when it holds
// a character outside the alphabet.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace rv
