// `rv help [COMMAND...]` and `rv version`: what `rv COMMAND --help` and `rv --version` print, for
// the users of gh, git and go who type them as commands.

#include "cli/commands.hpp"
#include "cli/help.hpp"
#include "core/config.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace rv::cli {
namespace {

Result<int> run_help(const CLI::App& app, const std::vector<std::string>& words)
{
  const CLI::App* at = &app;
  std::string path = "rv";
  for (const auto& w : words) {
    const auto* sub = find_subcommand(*at, w);
    if (sub == nullptr || sub->get_group().empty()) {
      std::vector<std::string> names;
      for (const auto* s : at->get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); })) {
        names.push_back(s->get_name());
      }
      const auto guess = did_you_mean(w, names);
      return fail(ErrorCode::usage, fmt::format("{} has no command '{}'", path, w),
                  guess.empty()
                      ? fmt::format("`{} --help` lists its commands", path)
                      : fmt::format("did you mean `rv help {}{}`?", path == "rv" ? "" : path.substr(3) + " ", guess));
    }
    at = sub;
    path += " " + w;
  }
  std::fputs(help_text(*at, terminal_width()).c_str(), stdout);
  return 0;
}

} // namespace

void setup_help(CLI::App& app, Context& ctx)
{
  auto words = std::make_shared<std::vector<std::string>>();
  auto* help = app.add_subcommand("help", "the help of rv or of a command (as rv COMMAND --help)");
  help->add_option("command", *words, "the command, e.g. run or sync push");
  help->callback([&app, &ctx, words] { ctx.action = [&app, words] { return run_help(app, *words); }; });

  auto* version =
      app.add_subcommand("version", "rv's version, commit, build, target and Kerberos support (as rv --version)");
  version->callback([&ctx] {
    ctx.action = [&ctx]() -> Result<int> {
      if (ctx.global.json) {
        nlohmann::json j{{"version", version_text()}};
        for (const auto& [key, value] : version_details()) {
          j[key] = value;
        }
        print_json(j);
      } else {
        std::fputs(version_long_text().c_str(), stdout);
      }
      return 0;
    };
  });
}

} // namespace rv::cli
