#include "slurm/node_state.hpp"

#include "slurm/text.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace rv::slurm {
namespace {

// sinfo's compact/long words -> (base, flag). A flag of "" adds none.
struct Word {
  std::string_view word, base, flag;
};
constexpr std::array<Word, 36> words{{
    {"idle", "idle", ""},
    {"mix", "mixed", ""},
    {"mixed", "mixed", ""},
    {"alloc", "allocated", ""},
    {"allocated", "allocated", ""},
    {"comp", "completing", ""},
    {"completing", "completing", ""},
    {"down", "down", ""},
    {"drain", "idle", "drain"},
    {"drained", "idle", "drain"},
    {"drng", "mixed", "drain"},
    {"draining", "mixed", "drain"},
    {"fail", "idle", "fail"},
    {"failg", "allocated", "fail"},
    {"failing", "allocated", "fail"},
    {"resv", "idle", "reserved"},
    {"reserved", "idle", "reserved"},
    {"maint", "idle", "maint"},
    {"plnd", "idle", "planned"},
    {"planned", "idle", "planned"},
    {"inval", "unknown", "inval"},
    {"unk", "unknown", ""},
    {"unknown", "unknown", ""},
    {"futr", "future", ""},
    {"future", "future", ""},
    {"npc", "allocated", "perfctrs"},
    {"perfctrs", "allocated", "perfctrs"},
    {"blocked", "idle", "blocked"},
    {"boot", "idle", "reboot_issued"},
    {"pow_dn", "idle", "powered_down"},
    {"powered_down", "idle", "powered_down"},
    {"powering_down", "idle", "powering_down"},
    {"powering_up", "idle", "powering_up"},
    {"reboot^", "idle", "reboot_issued"},
    {"n/a", "unknown", ""},
    {"cloud", "idle", "cloud"},
}};

// sinfo state suffixes (sinfo(1) NODE STATE CODES).
std::string_view suffix_flag(char c)
{
  switch (c) {
  case '*':
    return "not_responding";
  case '~':
    return "powered_down";
  case '#':
    return "powering_up";
  case '!':
    return "power_down";
  case '%':
    return "powering_down";
  case '$':
    return "maint";
  case '@':
    return "reboot_requested";
  case '^':
    return "reboot_issued";
  case '-':
    return "planned";
  default:
    return "";
  }
}

constexpr std::array<std::string_view, 8> scontrol_bases{"idle",   "mixed",   "allocated", "down",
                                                         "future", "unknown", "error",     "completing"};

constexpr std::array<std::string_view, 13> blocking{
    "drain",         "fail",          "maint",      "reserved",   "not_responding", "inval",   "invalid_reg",
    "reboot_issued", "powering_down", "power_down", "no_respond", "maintenance",    "draining"};

void add_flag(NodeState& s, std::string flag)
{
  if (!flag.empty() && std::find(s.flags.begin(), s.flags.end(), flag) == s.flags.end()) {
    s.flags.push_back(std::move(flag));
  }
}

} // namespace

NodeState parse_node_state(std::string_view state)
{
  NodeState s;
  auto raw = text::lower(text::trim(state));
  if (raw.find('+') != std::string::npos ||
      std::find(scontrol_bases.begin(), scontrol_bases.end(), raw) != scontrol_bases.end()) {
    // scontrol: BASE+FLAG+FLAG; DRAIN on IDLE means drained, on MIXED/ALLOCATED draining.
    bool first = true;
    for (auto part : text::split(raw, "+")) {
      std::string word(part);
      if (first) {
        s.base = word;
        first = false;
      } else {
        add_flag(s, word == "no_respond" ? "not_responding" : word);
      }
    }
  } else {
    // sinfo: word plus suffix characters.
    std::string word = raw;
    while (!word.empty() && !suffix_flag(word.back()).empty() && word != "n/a") {
      add_flag(s, std::string(suffix_flag(word.back())));
      word.pop_back();
    }
    auto it = std::find_if(words.begin(), words.end(), [&](const Word& w) { return w.word == word; });
    if (it != words.end()) {
      s.base = std::string(it->base);
      add_flag(s, std::string(it->flag));
    } else {
      s.base = word.empty() ? "unknown" : word;
    }
  }
  bool bad_base = s.base == "down" || s.base == "unknown" || s.base == "future" || s.base == "error";
  bool bad_flag = std::any_of(s.flags.begin(), s.flags.end(), [](const std::string& f) {
    return std::find(blocking.begin(), blocking.end(), f) != blocking.end();
  });
  s.usable = !bad_base && !bad_flag;
  return s;
}

} // namespace rv::slurm
