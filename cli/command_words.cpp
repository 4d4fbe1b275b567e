#include "cli/command_words.hpp"

namespace rv::cli {
namespace {

// Tells whether `word` names an option of `app` (or of its parent, since options fall
// through) that takes a value in the next word.
bool option_takes_next(const CLI::App* app, const std::string& word)
{
  if (word.find('=') != std::string::npos) {
    return false; // --timeout=5s
  }
  for (; app != nullptr; app = app->get_parent()) {
    if (const auto* opt = app->get_option_no_throw(word)) {
      return opt->get_items_expected_min() > 0;
    }
  }
  return false;
}

} // namespace

SplitArgs split_command_words(const CLI::App& app, const std::vector<std::string>& args,
                              const std::set<std::string>& takes_command, const std::set<std::string>& after_dashes)
{
  SplitArgs split;
  const CLI::App* sub = nullptr;
  std::size_t i = 0;
  // Find the subcommand, skipping global options and their values.
  for (; i < args.size(); ++i) {
    const auto& word = args[i];
    split.rv_args.push_back(word);
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() > 1 && word[0] == '-') {
      if (option_takes_next(&app, word) && i + 1 < args.size()) {
        split.rv_args.push_back(args[++i]);
      }
      continue;
    }
    if (takes_command.count(word) != 0) {
      sub = app.get_subcommand(word);
      ++i;
    } else if (after_dashes.count(word) != 0) {
      // `rv ssh REQ -- CMD...`: its own words up to `--`, the command after it.
      for (++i; i < args.size() && args[i] != "--"; ++i) {
        split.rv_args.push_back(args[i]);
      }
      if (i < args.size()) {
        split.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      }
      return split;
    }
    break;
  }
  if (sub == nullptr) {
    for (++i; i < args.size(); ++i) {
      split.rv_args.push_back(args[i]);
    }
    return split;
  }
  // Inside the subcommand: its options (and global ones) until the first other word.
  for (; i < args.size(); ++i) {
    const auto& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() > 1 && word[0] == '-') {
      split.rv_args.push_back(word);
      if (option_takes_next(sub, word) && i + 1 < args.size()) {
        split.rv_args.push_back(args[++i]);
      }
      continue;
    }
    break;
  }
  split.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return split;
}

} // namespace rv::cli
