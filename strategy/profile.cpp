#include "strategy/profile.hpp"

#include "core/config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <regex>

namespace rv::strategy {
namespace {

using nlohmann::json;

std::unexpected<Error> bad(const std::string& where, const std::string& what, std::string hint = {})
{
  return fail(ErrorCode::config, fmt::format("site profile: {}: {}", where, what), std::move(hint));
}

// Fails on keys of `obj` not in `known` (keys starting with '_' are comments).
Result<void> check_keys(const json& obj, const std::string& where, const std::vector<std::string>& known)
{
  for (const auto& [key, value] : obj.items()) {
    if (key.starts_with('_') || std::find(known.begin(), known.end(), key) != known.end()) {
      continue;
    }
    auto guess = did_you_mean(key, known);
    return bad(where, fmt::format("unknown key '{}'", key),
               guess.empty() ? "" : fmt::format("did you mean '{}'?", guess));
  }
  return {};
}

Result<std::string> get_string(const json& v, const std::string& where)
{
  if (!v.is_string()) {
    return bad(where, "must be a string");
  }
  return v.get<std::string>();
}

Result<int> get_count(const json& v, const std::string& where, int min)
{
  if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > 1'000'000) {
    return bad(where, fmt::format("must be a whole number >= {}", min));
  }
  return static_cast<int>(v.get<long long>());
}

Result<double> get_rate(const json& v, const std::string& where)
{
  if (!v.is_number() || v.get<double>() < 0) {
    return bad(where, "must be a number >= 0");
  }
  return v.get<double>();
}

Result<bool> get_bool(const json& v, const std::string& where)
{
  if (!v.is_boolean()) {
    return bad(where, "must be true or false");
  }
  return v.get<bool>();
}

Result<GpuTypeInfo> parse_type(const json& obj, const std::string& where)
{
  if (!obj.is_object()) {
    return bad(where, "must be an object");
  }
  if (auto checked = check_keys(
          obj, where, {"vram_gb", "nvlink", "infiniband", "su_per_gpu_hour", "free", "mig", "max_gpus_per_user"});
      !checked) {
    return std::unexpected(checked.error());
  }
  GpuTypeInfo info;
  for (const auto& [key, v] : obj.items()) {
    auto at = where + "." + key;
    if (key == "vram_gb") {
      RV_TRY(n, get_count(v, at, 1));
      info.vram_gb = n;
    } else if (key == "nvlink") {
      RV_TRY(b, get_bool(v, at));
      info.nvlink = b;
    } else if (key == "infiniband") {
      RV_TRY(b, get_bool(v, at));
      info.infiniband = b;
    } else if (key == "su_per_gpu_hour") {
      RV_TRY(r, get_rate(v, at));
      info.su_per_gpu_hour = r;
    } else if (key == "free") {
      RV_TRY(b, get_bool(v, at));
      info.free = b;
    } else if (key == "mig") {
      RV_TRY(b, get_bool(v, at));
      info.mig = b;
    } else if (key == "max_gpus_per_user") {
      RV_TRY(n, get_count(v, at, 0));
      info.max_gpus_per_user = n;
    }
  }
  return info;
}

Result<GpuAlias> parse_alias(const json& v, const std::string& where)
{
  GpuAlias alias;
  if (v.is_string()) { // shorthand: "a100": "a100_80"
    alias.types.push_back(v.get<std::string>());
    return alias;
  }
  if (v.is_array()) { // shorthand: "a100": ["a100_80", "a100_40"]
    for (const auto& t : v) {
      RV_TRY(s, get_string(t, where + "[]"));
      alias.types.push_back(s);
    }
    return alias;
  }
  if (!v.is_object()) {
    return bad(where, "must be a type name, a list of type names, or an object");
  }
  if (auto checked = check_keys(v, where, {"types", "partition", "constraint"}); !checked) {
    return std::unexpected(checked.error());
  }
  if (v.contains("types")) {
    if (!v["types"].is_array()) {
      return bad(where + ".types", "must be a list of GRES type names");
    }
    for (const auto& t : v["types"]) {
      RV_TRY(s, get_string(t, where + ".types[]"));
      alias.types.push_back(s);
    }
  }
  if (v.contains("partition")) {
    RV_TRY(s, get_string(v["partition"], where + ".partition"));
    alias.partition = s;
  }
  if (v.contains("constraint")) {
    RV_TRY(s, get_string(v["constraint"], where + ".constraint"));
    alias.constraint = s;
  }
  if (alias.types.empty() && alias.partition.empty() && alias.constraint.empty()) {
    return bad(where, "names no types, partition or constraint");
  }
  return alias;
}

} // namespace

const GpuTypeInfo* Profile::find(const std::string& type) const
{
  auto it = types.find(type);
  return it == types.end() ? nullptr : &it->second;
}

Result<Profile> parse_profile(std::string_view json_text)
{
  json root = json::parse(json_text, nullptr, false, /*ignore_comments=*/true);
  if (root.is_discarded()) {
    return fail(ErrorCode::config, "site profile: not valid JSON", "check commas and quotes; see docs/profile.md");
  }
  if (!root.is_object()) {
    return bad("top level", "must be a JSON object");
  }
  if (auto checked = check_keys(root, "top level",
                                {"version", "aliases", "types", "su_per_billing_hour", "max_gpus_per_user",
                                 "default_account", "mig_pattern", "preflight", "quota_command", "container_image"});
      !checked) {
    return std::unexpected(checked.error());
  }
  Profile p;
  for (const auto& [key, v] : root.items()) {
    if (key == "version") {
      RV_TRY(n, get_count(v, "version", 1));
      if (n != 1) {
        return bad("version", fmt::format("unsupported version {} (this rv reads version 1)", n));
      }
    } else if (key == "su_per_billing_hour") {
      RV_TRY(r, get_rate(v, key));
      p.su_per_billing_hour = r;
    } else if (key == "max_gpus_per_user") {
      RV_TRY(n, get_count(v, key, 0));
      p.max_gpus_per_user = n;
    } else if (key == "default_account") {
      RV_TRY(s, get_string(v, key));
      p.default_account = s;
    } else if (key == "quota_command") {
      RV_TRY(s, get_string(v, key));
      p.quota_command = s;
    } else if (key == "mig_pattern") {
      RV_TRY(s, get_string(v, key));
      try {
        std::regex check(s);
      } catch (const std::regex_error& e) {
        return bad(key, fmt::format("not a valid regular expression: {}", e.what()));
      }
      p.mig_pattern = s;
    } else if (key == "container_image") {
      RV_TRY(s, get_string(v, key));
      p.container_image = s;
    } else if (key == "preflight") {
      if (!v.is_object()) {
        return bad(key, "must be an object with `command` and/or `required`");
      }
      if (auto checked = check_keys(v, key, {"command", "required"}); !checked) {
        return std::unexpected(checked.error());
      }
      if (v.contains("command")) {
        RV_TRY(s, get_string(v["command"], "preflight.command"));
        p.preflight_command = s;
      }
      if (v.contains("required")) {
        RV_TRY(b, get_bool(v["required"], "preflight.required"));
        p.preflight_required = b;
      }
    } else if (key == "types") {
      if (!v.is_object()) {
        return bad(key, "must be an object keyed by GRES type");
      }
      for (const auto& [name, obj] : v.items()) {
        if (name.starts_with('_')) {
          continue;
        }
        RV_TRY(info, parse_type(obj, "types." + name));
        p.types.emplace(name, std::move(info));
      }
    } else if (key == "aliases") {
      if (!v.is_object()) {
        return bad(key, "must be an object keyed by alias name");
      }
      for (const auto& [name, obj] : v.items()) {
        if (name.starts_with('_')) {
          continue;
        }
        RV_TRY(alias, parse_alias(obj, "aliases." + name));
        p.aliases.emplace(name, std::move(alias));
      }
    }
  }
  return p;
}

} // namespace rv::strategy
