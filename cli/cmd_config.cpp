// `rv config show|set|unset`: every configuration value and where it came from; typed edits of
// the config file.

#include "cli/commands.hpp"
#include "core/store/json_bytes.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace rv::cli {

void print_json(const nlohmann::json& data)
{
  std::fputs((store::dump_for_display(data) + "\n").c_str(), stdout); // never throws on odd bytes
}

namespace {

Result<int> show_config(const Context& ctx)
{
  if (ctx.global.json) {
    nlohmann::json out = nlohmann::json::object();
    out["config_file"] = {{"value", ctx.config_file}, {"origin", ctx.config_file_read ? "read" : "absent"}};
    for (const auto& key : config_keys()) {
      out[key.name] = {{"value", config_value_json(key, ctx.config.get(key.name))},
                       {"origin", to_string(ctx.config.origin(key.name))}};
    }
    print_json(out);
    return 0;
  }
  std::fputs(
      fmt::format("# config file: {} ({})\n", ctx.config_file, ctx.config_file_read ? "read" : "absent: defaults")
          .c_str(),
      stdout);
  for (const auto& key : config_keys()) {
    std::fputs(fmt::format("{:<18} = {:<24} ({})\n", key.name, ctx.config.get(key.name),
                           to_string(ctx.config.origin(key.name)))
                   .c_str(),
               stdout);
  }
  return 0;
}

// Writes (or with no value removes) `key` in the config file rv reads, and says what changed.
Result<int> edit_config(const Context& ctx, const std::string& key, const std::optional<std::string>& value)
{
  RV_TRY_VOID(write_config_value(ctx.config_file, key, value));
  RV_TRY(known, find_config_key(key));
  if (ctx.global.json) {
    print_json({{"config_file", ctx.config_file},
                {"key", key},
                {"value", value ? config_value_json(*known, *value) : nlohmann::json(nullptr)}});
  } else if (value) {
    std::fputs(fmt::format("{} = {} (in {})\n", key, *value, ctx.config_file).c_str(), stdout);
  } else {
    std::fputs(fmt::format("{} unset: default {} (in {})\n", key,
                           known->default_value.empty() ? "\"\"" : known->default_value, ctx.config_file)
                   .c_str(),
               stdout);
  }
  return 0;
}

} // namespace

void setup_config(CLI::App& app, Context& ctx)
{
  auto* config = app.add_subcommand("config", "show or edit rv's configuration");
  config->require_subcommand(1);
  auto* show = config->add_subcommand("show", "print every value and where it came from (default, file, env, flag)");
  show->callback([&ctx] { ctx.action = [&ctx] { return show_config(ctx); }; });

  struct SetOptions {
    std::string key, value;
  };
  auto set_opts = std::make_shared<SetOptions>();
  auto* set = config->add_subcommand("set", "set KEY to VALUE in the config file (checked against the key's type)");
  set->add_option("key", set_opts->key, "a key `rv config show` lists, e.g. max_strategies")->required();
  set->add_option("value", set_opts->value, "its value, e.g. 4")->required();
  set->callback([&ctx, set_opts] {
    ctx.tolerate_bad_config = true;
    ctx.action = [&ctx, set_opts] { return edit_config(ctx, set_opts->key, set_opts->value); };
  });

  auto unset_key = std::make_shared<std::string>();
  auto* unset = config->add_subcommand("unset", "remove KEY from the config file (back to its default)");
  unset->add_option("key", *unset_key, "the key")->required();
  unset->callback([&ctx, unset_key] {
    ctx.tolerate_bad_config = true;
    ctx.action = [&ctx, unset_key] { return edit_config(ctx, *unset_key, std::nullopt); };
  });
}

} // namespace rv::cli
