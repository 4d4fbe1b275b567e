#pragma once
// JSON that keeps any bytes. nlohmann::json holds strings as raw bytes but refuses to dump one
// that is not valid UTF-8 (a Latin-1 file name, a binary secret). rv's stores write such a string
// as {"rv:bytes": "<hex>"} and read it back as the same bytes, so nothing is lost and nothing
// throws; every valid UTF-8 string is written as itself.

#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace rv::store {

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view s);

// `doc` as text (indented by 2, newline-terminated); strings that are not UTF-8 become
// {"rv:bytes": hex}. Object keys that are not UTF-8 are an error (rv's keys are its own names).
Result<std::string> dump_lossless(const nlohmann::json& doc);

// Parses what dump_lossless wrote, turning every {"rv:bytes": hex} back into its bytes.
Result<nlohmann::json> parse_lossless(std::string_view text);

// For showing JSON to people and programs (--json): invalid bytes become U+FFFD, never a throw.
std::string dump_for_display(const nlohmann::json& doc, int indent = 2);

} // namespace rv::store
