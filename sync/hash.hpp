#pragma once
// SHA-256, for content hashes (dependency files) and project identities, and HMAC-SHA256 (RFC 2104)
// for what rv signs: webhook keys, workspace markers.

#include <string>
#include <string_view>

namespace rv::sync {

// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

// Lower-case hex HMAC-SHA256 (RFC 2104) of `data` with `key`.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

} // namespace rv::sync
