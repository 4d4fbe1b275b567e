// `rv config show`: every configuration value and where it came from.

#include "cli/commands.hpp"
#include "core/store/json_bytes.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace rv::cli {

void print_json(const nlohmann::json& data)
{
  std::fputs((store::dump_for_display(data) + "\n").c_str(), stdout); // never throws on odd bytes
}

void setup_config(CLI::App& app, Context& ctx)
{
  auto* config = app.add_subcommand("config", "show rv's configuration");
  config->require_subcommand(1);
  auto* show = config->add_subcommand("show", "print every value and where it came from (default, file, env, flag)");
  show->callback([&ctx] {
    ctx.action = [&ctx]() -> Result<int> {
      if (ctx.global.json) {
        nlohmann::json out = nlohmann::json::object();
        out["config_file"] = {{"value", ctx.config_file}, {"origin", ctx.config_file_read ? "read" : "absent"}};
        for (const auto& key : config_keys()) {
          out[key.name] = {{"value", ctx.config.get(key.name)}, {"origin", to_string(ctx.config.origin(key.name))}};
        }
        print_json(out);
        return 0;
      }
      std::fputs(
          fmt::format("# config file: {} ({})\n", ctx.config_file, ctx.config_file_read ? "read" : "absent: defaults")
              .c_str(),
          stdout);
      for (const auto& key : config_keys()) {
        std::fputs(fmt::format("{:<16} = {:<24} ({})\n", key.name, ctx.config.get(key.name),
                               to_string(ctx.config.origin(key.name)))
                       .c_str(),
                   stdout);
      }
      return 0;
    };
  });
}

} // namespace rv::cli
