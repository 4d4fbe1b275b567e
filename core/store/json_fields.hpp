#pragma once
// Typed reads of free-form JSON (a record's nested `sync`, `plan`, `refanout`): the fallback
// whenever the document is no object, the key is missing or its value has another type. One odd
// record must never throw a type_error that hides the others from `rv ps -a` or `rv why` (N5).

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace rv::store {

std::string text_field(const nlohmann::json& obj, std::string_view key, std::string_view fallback = {});
bool bool_field(const nlohmann::json& obj, std::string_view key, bool fallback = false);
double number_field(const nlohmann::json& obj, std::string_view key, double fallback = 0);
// The array or object under `key`, or an empty one.
const nlohmann::json& array_field(const nlohmann::json& obj, std::string_view key);
const nlohmann::json& object_field(const nlohmann::json& obj, std::string_view key);

} // namespace rv::store
