#include "core/store/json_fields.hpp"

namespace rv::store {
namespace {

const nlohmann::json* find(const nlohmann::json& obj, std::string_view key)
{
  if (!obj.is_object()) {
    return nullptr;
  }
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

} // namespace

std::string text_field(const nlohmann::json& obj, std::string_view key, std::string_view fallback)
{
  const auto* v = find(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string(fallback);
}

bool bool_field(const nlohmann::json& obj, std::string_view key, bool fallback)
{
  const auto* v = find(obj, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

double number_field(const nlohmann::json& obj, std::string_view key, double fallback)
{
  const auto* v = find(obj, key);
  return v && v->is_number() ? v->get<double>() : fallback;
}

const nlohmann::json& array_field(const nlohmann::json& obj, std::string_view key)
{
  static const nlohmann::json empty = nlohmann::json::array();
  const auto* v = find(obj, key);
  return v && v->is_array() ? *v : empty;
}

const nlohmann::json& object_field(const nlohmann::json& obj, std::string_view key)
{
  static const nlohmann::json empty = nlohmann::json::object();
  const auto* v = find(obj, key);
  return v && v->is_object() ? *v : empty;
}

} // namespace rv::store
