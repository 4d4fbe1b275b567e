// `rv completion bash|zsh|fish` and `rv man`: shell completions and the rv(1) man page, made from
// the CLI definition itself (cli/cli_spec.hpp), so they never drift from the real flags.

#include "cli/cli_spec.hpp"
#include "cli/commands.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace rv::cli {

void setup_completion(CLI::App& app, Context& ctx)
{
  auto shell = std::make_shared<std::string>();
  auto* completion = app.add_subcommand("completion", "print a shell completion script (bash, zsh or fish)");
  completion->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion->callback([&app, &ctx, shell] {
    ctx.action = [&app, shell]() -> Result<int> {
      std::fputs(completion_script(spec_of(app), *shell).c_str(), stdout);
      return 0;
    };
  });
  auto* man = app.add_subcommand("man", "print the rv(1) man page (roff; `rv man | man -l -`)");
  man->callback([&app, &ctx] {
    ctx.action = [&app]() -> Result<int> {
      std::fputs(man_page(spec_of(app), usage_examples(), version_text()).c_str(), stdout);
      return 0;
    };
  });
}

} // namespace rv::cli
