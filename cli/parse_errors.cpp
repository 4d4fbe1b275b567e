#include "cli/parse_errors.hpp"

#include "cli/help.hpp"
#include "core/config.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::cli {
namespace {

std::vector<std::string> command_names(const CLI::App& app)
{
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// The deepest subcommand the parse reached (`rv sync push ...` -> push), else the app.
const CLI::App* parsed_leaf(const CLI::App& app)
{
  const CLI::App* at = &app;
  while (true) {
    auto subs = at->get_subcommands();
    if (subs.empty()) {
      return at;
    }
    at = subs.front();
  }
}

// Every flag spelling `at` and its parents accept: --long and -s.
std::vector<std::string> flag_names(const CLI::App* at)
{
  std::vector<std::string> names;
  for (; at != nullptr; at = at->get_parent()) {
    for (const auto* opt : at->get_options()) {
      for (const auto& l : opt->get_lnames()) {
        names.push_back("--" + l);
      }
      for (const auto& s : opt->get_snames()) {
        names.push_back("-" + s);
      }
    }
  }
  return names;
}

std::string path_of(const CLI::App* at)
{
  std::string path;
  for (; at != nullptr && at->get_parent() != nullptr; at = at->get_parent()) {
    path = at->get_name() + (path.empty() ? "" : " " + path);
  }
  return path.empty() ? "rv" : "rv " + path;
}

} // namespace

Error usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args)
{
  const auto commands = command_names(app);
  const std::string list = fmt::format("commands: {}; `rv --help` shows them all", fmt::join(commands, ", "));
  const std::string name = e.get_name();
  const CLI::App* leaf = parsed_leaf(app);
  auto unknown_flag = [&](const CLI::App* at, const std::string& word) {
    const std::string flag = word.substr(0, word.find('='));
    auto guess = did_you_mean(flag, flag_names(at));
    return Error{ErrorCode::usage, fmt::format("{} has no option {}", path_of(at), flag),
                 guess.empty() ? fmt::format("`{} --help` lists its options", path_of(at))
                               : fmt::format("did you mean {}? (`{} --help` lists them)", guess, path_of(at))};
  };
  if (name == "RequiredError" && leaf == &app) {
    // `rv`, `rv foo`, `rv --hlep`: no known command. Read the words up to the first that is not a
    // flag (that is the command they meant), skipping the values of rv's own options (`-H host`);
    // a flag rv does not know before it is the slip.
    const auto known = flag_names(&app);
    std::vector<std::string> takes_value;
    for (const auto* opt : app.get_options()) {
      if (opt->get_expected_min() > 0) {
        for (const auto& l : opt->get_lnames()) {
          takes_value.push_back("--" + l);
        }
        for (const auto& n : opt->get_snames()) {
          takes_value.push_back("-" + n);
        }
      }
    }
    auto typed = args.end();
    for (auto it = args.begin(); it != args.end(); ++it) {
      if (!it->starts_with('-')) {
        typed = it;
        break;
      }
      const auto flag = it->substr(0, it->find('='));
      if (std::find(known.begin(), known.end(), flag) == known.end()) {
        return unknown_flag(&app, *it);
      }
      if (flag == *it && std::find(takes_value.begin(), takes_value.end(), flag) != takes_value.end() &&
          ++it == args.end()) {
        break;
      }
    }
    if (typed == args.end()) {
      return Error{ErrorCode::usage, "rv needs a command", list};
    }
    auto guess = did_you_mean(*typed, commands);
    return Error{ErrorCode::usage, fmt::format("unknown command '{}'", *typed),
                 guess.empty() ? list : fmt::format("did you mean `rv {}`? {}", guess, list)};
  }
  const std::string what = e.what();
  if (what.starts_with("The following argument")) {
    // "The following arguments were not expected: 2 --gpus" (CLI11 names the error after the
    // subcommand): the flag is the slip; a bare word is an argument the command does not take.
    std::vector<std::string> words;
    auto colon = what.find(": ");
    std::string rest = colon == std::string::npos ? std::string() : what.substr(colon + 2);
    for (std::size_t pos = 0; pos < rest.size();) {
      auto sp = rest.find(' ', pos);
      words.push_back(rest.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos));
      pos = sp == std::string::npos ? rest.size() : sp + 1;
    }
    auto flag = std::find_if(words.begin(), words.end(), [](const std::string& w) { return w.starts_with('-'); });
    if (flag != words.end()) {
      return unknown_flag(leaf, *flag);
    }
    const std::string extra = words.empty() ? rest : words.front();
    auto guess = leaf == &app ? did_you_mean(extra, commands) : std::string();
    return Error{ErrorCode::usage, fmt::format("{}: unexpected argument '{}'", path_of(leaf), extra),
                 guess.empty() ? fmt::format("`{} --help` shows its usage", path_of(leaf))
                               : fmt::format("did you mean `rv {}`?", guess)};
  }
  if (name == "RequiredError" && !leaf->get_subcommands([](const CLI::App*) { return true; }).empty()) {
    // `rv sync`, `rv config`: a command group without its subcommand.
    std::vector<std::string> subs;
    for (const auto* s : leaf->get_subcommands([](const CLI::App*) { return true; })) {
      subs.push_back(s->get_name());
    }
    // The word after the group's name, if any, is the subcommand they typed.
    auto at = std::find(args.begin(), args.end(), leaf->get_name());
    auto typed = at == args.end()
                     ? at
                     : std::find_if(at + 1, args.end(), [](const std::string& a) { return !a.starts_with('-'); });
    if (typed != args.end()) {
      auto guess = did_you_mean(*typed, subs);
      return Error{ErrorCode::usage, fmt::format("{} has no command '{}'", path_of(leaf), *typed),
                   guess.empty() ? fmt::format("it has: {}", fmt::join(subs, ", "))
                                 : fmt::format("did you mean `{} {}`?", path_of(leaf), guess)};
    }
    return Error{ErrorCode::usage, fmt::format("{} needs one of: {}", path_of(leaf), fmt::join(subs, ", ")),
                 fmt::format("`{} --help` shows what each does", path_of(leaf))};
  }
  const auto example = [&]() -> std::string {
    const auto path = path_of(leaf);
    const auto examples = examples_of(path.size() > 3 ? path.substr(3) : "");
    return examples.empty() ? fmt::format("`{} --help` shows its usage", path)
                            : fmt::format("e.g. {} (`{} --help` shows its usage)", examples.front().first, path);
  };
  if (name == "RequiredError") {
    // `rv sync pull`, `rv completion`: a positional the command needs ("remote is required").
    for (const auto* o : leaf->get_options()) {
      if (o->get_positional() && o->get_required() && o->count() == 0) {
        return Error{
            ErrorCode::usage,
            fmt::format("{} needs {}: {}", path_of(leaf), text::upper(o->get_name(true, false)), o->get_description()),
            example()};
      }
    }
  }
  if (name == "ConversionError" && what.starts_with("Could not convert: ")) {
    // "Could not convert: --gpu = abc"
    const auto rest = what.substr(std::string("Could not convert: ").size());
    const auto eq = rest.find(" = ");
    if (eq != std::string::npos) {
      const auto flag = rest.substr(0, eq);
      const auto value = rest.substr(eq + 3);
      const auto* o = leaf->get_option_no_throw(flag);
      const auto type = o == nullptr ? std::string() : o->get_type_name();
      const bool whole = type.starts_with("INT") || type.starts_with("UINT") || type.empty();
      return Error{ErrorCode::usage,
                   fmt::format("{} takes {}, not '{}'", flag, whole ? "a whole number" : "a number", value), example()};
    }
  }
  std::string message = what;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  return Error{ErrorCode::usage, fmt::format("{}: {}", path_of(leaf), message),
               fmt::format("`{} --help` shows its usage", path_of(leaf))};
}

} // namespace rv::cli
