#pragma once
// Layered configuration: defaults < config file < RV_* environment < flags, with each value's
// origin kept for `rv config show`.

#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv {

// Where a value came from.
enum class Origin { default_value, file, environment, flag };
const char* to_string(Origin origin);

// What a key's values must look like.
enum class ValueKind { text, duration, size, count, boolean, choice, url, email };

// An http:// or https:// URL without spaces, quotes, backslashes or line breaks.
bool is_http_url(std::string_view url);

// One known key: its name, default, what it means, and its type.
struct ConfigKey {
  std::string name;
  std::string default_value;
  std::string description;
  ValueKind kind = ValueKind::text;
  std::vector<std::string> choices = {}; // choice: the allowed values
  std::int64_t min = 0, max = 0;         // count: the allowed range
  bool zero_is_off = false;              // duration: "0" is allowed and means off
};

// The keys rv knows, in display order.
const std::vector<ConfigKey>& config_keys();

// The key called `name`, or a config error with a did-you-mean.
Result<const ConfigKey*> find_config_key(const std::string& name);

// Checks `value` against the key's type: "<key> '<value>' is not ..." with a hint on failure.
Result<void> check_config_value(const ConfigKey& key, const std::string& value);

// The value as JSON: a number for counts, true/false for booleans, a string otherwise.
nlohmann::json config_value_json(const ConfigKey& key, const std::string& value);

// `rv config set|unset`: sets `key` to `value` (checked; nullopt removes it) in the JSON config
// file at `path`, keeping its other keys, written atomically (the file is created if missing).
Result<void> write_config_value(const std::string& path, const std::string& key,
                                const std::optional<std::string>& value);

class Config {
public:
  // Starts from the defaults of `config_keys()`.
  Config();

  // Returns the value of `key` ("" when unset); `key` must be known.
  const std::string& get(const std::string& key) const;
  // Returns where the value of `key` came from.
  Origin origin(const std::string& key) const;
  // Sets `key`; unknown keys are an error with a did-you-mean hint.
  Result<void> set(const std::string& key, std::string value, Origin origin);

  // Reads `key` as seconds (duration grammar) or as a whole number.
  Result<std::int64_t> get_seconds(const std::string& key) const;

  // Layers a JSON object file (`{"host": "..."}`); a missing file is fine.
  Result<void> load_file(const std::string& path);
  // Layers RV_<KEY> variables (upper case, '-' as '_') from `env` (name -> value).
  Result<void> load_env(const std::map<std::string, std::string>& env);

  // Where the user's config file lives: $XDG_CONFIG_HOME/rv/config.json or ~/.config/rv/...
  static std::string default_path();

private:
  struct Value {
    std::string value;
    Origin origin = Origin::default_value;
  };
  std::map<std::string, Value> m_values;
};

// Returns the process environment as a map, for `Config::load_env`.
std::map<std::string, std::string> environment_map();

// Returns the closest of `candidates` to `word` when it is close enough, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

} // namespace rv
