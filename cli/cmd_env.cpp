// `rv env set|list|rm|import`: secrets that every job rv submits gets in its environment.

#include "cli/commands.hpp"
#include "cli/terminal_input.hpp"
#include "core/secrets.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <unistd.h>

namespace rv::cli {
namespace {

// Reads a value from stdin: with echo off and a prompt on a terminal, else every byte up to EOF
// (one trailing newline dropped, so `echo tok | rv env set NAME` stores "tok").
std::string read_value(const std::string& name)
{
  std::string value;
  if (::isatty(0)) {
    return read_hidden_line(fmt::format("value for {} (not shown): ", name));
  }
  value.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (value.ends_with('\n')) {
    value.pop_back();
    if (value.ends_with('\r')) {
      value.pop_back();
    }
  }
  return value;
}

std::string names_of(const std::vector<secrets::Var>& vars)
{
  std::string out;
  for (const auto& v : vars) {
    out += (out.empty() ? "" : ", ") + v.name;
  }
  return out;
}

} // namespace

void setup_env(CLI::App& app, Context& ctx)
{
  auto* env = app.add_subcommand("env", "secrets every job gets in its environment (never in argv, scripts or logs)");
  env->require_subcommand(1);

  struct SetOptions {
    std::string name;
    std::optional<std::string> value;
  };
  auto set_opts = std::make_shared<SetOptions>();
  auto* set = env->add_subcommand("set", "set NAME; the value is read from stdin (hidden on a terminal) unless given");
  set->add_option("name", set_opts->name, "variable name, e.g. HF_TOKEN")->required();
  set->add_option("value", set_opts->value, "the value (prefer stdin: a value here lands in your shell history)");
  set->callback([&ctx, set_opts] {
    ctx.action = [&ctx, set_opts]() -> Result<int> {
      RV_TRY_VOID(secrets::validate_name(set_opts->name));
      if (set_opts->value) {
        spdlog::warn("the value of {} is now in your shell history; `rv env set {}` alone reads it from stdin",
                     set_opts->name, set_opts->name);
      }
      const std::string value = set_opts->value ? *set_opts->value : read_value(set_opts->name);
      if (value.empty()) {
        return fail(ErrorCode::usage, fmt::format("empty value for {}", set_opts->name),
                    fmt::format("`rv env rm {}` removes a secret", set_opts->name));
      }
      secrets::Store store(secrets::Store::default_path());
      RV_TRY_VOID(store.set({{set_opts->name, value}}));
      if (ctx.global.json) {
        print_json({{"set", set_opts->name}, {"value", secrets::mask(value)}});
        return 0;
      }
      std::fputs(fmt::format("set {} ({})\n", set_opts->name, secrets::mask(value)).c_str(), stderr);
      return 0;
    };
  });

  auto show = std::make_shared<bool>(false);
  auto* list = env->add_subcommand("list", "list the secrets, values masked");
  list->alias("ls");
  list->add_flag("--show", *show, "print the values unmasked");
  list->callback([&ctx, show] {
    ctx.action = [&ctx, show]() -> Result<int> {
      secrets::Store store(secrets::Store::default_path());
      RV_TRY(vars, store.load());
      if (ctx.global.json) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& v : vars) {
          out[v.name] = *show ? v.value : secrets::mask(v.value);
        }
        print_json(out);
        return 0;
      }
      if (vars.empty()) {
        std::fputs("no secrets (rv env set NAME, or rv env import .env)\n", stdout);
      }
      for (const auto& v : vars) {
        std::fputs(fmt::format("{}={}\n", v.name, *show ? v.value : secrets::mask(v.value)).c_str(), stdout);
      }
      return 0;
    };
  });

  auto rm_names = std::make_shared<std::vector<std::string>>();
  auto* rm = env->add_subcommand("rm", "remove secrets");
  rm->add_option("names", *rm_names, "variable names")->required();
  rm->callback([&ctx, rm_names] {
    ctx.action = [&ctx, rm_names]() -> Result<int> {
      secrets::Store store(secrets::Store::default_path());
      RV_TRY_VOID(store.remove(*rm_names));
      if (ctx.global.json) {
        print_json({{"removed", *rm_names}});
        return 0;
      }
      std::fputs(fmt::format("removed {}\n", fmt::join(*rm_names, ", ")).c_str(), stderr);
      return 0;
    };
  });

  auto file = std::make_shared<std::string>(".env");
  auto* import = env->add_subcommand("import", "add every variable of a .env file (default ./.env)");
  import->add_option("file", *file, "the .env file");
  import->callback([&ctx, file] {
    ctx.action = [&ctx, file]() -> Result<int> {
      std::ifstream in(*file, std::ios::binary);
      if (!in) {
        return fail(ErrorCode::usage, fmt::format("cannot read {}", *file), "give the path of a .env file");
      }
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      RV_TRY(vars, secrets::parse_dotenv(text));
      if (vars.empty()) {
        return fail(ErrorCode::usage, fmt::format("{} sets no variables", *file), "lines look like NAME=value");
      }
      secrets::Store store(secrets::Store::default_path());
      RV_TRY_VOID(store.set(vars));
      if (ctx.global.json) {
        std::vector<std::string> names;
        for (const auto& v : vars) {
          names.push_back(v.name);
        }
        print_json({{"imported", names}, {"file", *file}});
        return 0;
      }
      std::fputs(fmt::format("imported {} secret{} from {}: {}\n", vars.size(), vars.size() == 1 ? "" : "s", *file,
                             names_of(vars))
                     .c_str(),
                 stderr);
      return 0;
    };
  });
}

} // namespace rv::cli
