#include "slurm/assoc_mgr.hpp"

#include "core/text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

namespace rv::slurm {
namespace {

// `60000(532)` -> {60000, 532}; `N(0)` -> nullopt (no limit).
std::optional<std::pair<double, double>> limit_and_used(std::string_view v)
{
  auto open = v.find('(');
  if (open == std::string_view::npos || v.back() != ')') {
    return std::nullopt;
  }
  const std::string limit(v.substr(0, open));
  const std::string used(v.substr(open + 1, v.size() - open - 2));
  if (limit.empty() || limit == "N") {
    return std::nullopt;
  }
  char* end = nullptr;
  double l = std::strtod(limit.c_str(), &end);
  if (end == limit.c_str() || *end != '\0') {
    return std::nullopt;
  }
  double u = std::strtod(used.c_str(), nullptr);
  return std::make_pair(l, u);
}

// The parent account of `ParentAccount=root(1)`.
std::string parent_name(std::string_view v)
{
  return std::string(v.substr(0, v.find('(')));
}

} // namespace

std::vector<std::string> assoc_mgr_argv(const std::string& user)
{
  return {"scontrol", "show", "assoc_mgr", "users=" + user, "flags=assoc"};
}

Result<std::vector<AssocUsage>> parse_assoc_mgr(std::string_view text)
{
  std::vector<AssocUsage> out;
  for (auto line : text::lines(text)) {
    for (auto token : text::split_ws(line)) {
      auto eq = token.find('=');
      if (eq == std::string_view::npos) {
        continue;
      }
      auto key = token.substr(0, eq);
      auto value = token.substr(eq + 1);
      if (key == "ClusterName") {
        out.emplace_back();
        continue;
      }
      if (out.empty()) {
        continue; // before the first record: the banner
      }
      auto& a = out.back();
      if (key == "Account") {
        a.account = value;
      } else if (key == "UserName") {
        a.user = std::string(value.substr(0, value.find('(')));
      } else if (key == "Partition") {
        a.partition = value;
      } else if (key == "ParentAccount") {
        a.parent = parent_name(value);
      } else if (key.starts_with("Grp") && !value.empty()) {
        if (value.find('=') == std::string_view::npos) {
          if (auto lu = limit_and_used(value)) {
            a.limits.push_back({std::string(key), "", lu->first, lu->second});
          }
          continue;
        }
        for (auto item : text::split(value, ",")) {
          auto ieq = item.find('=');
          if (ieq == std::string_view::npos) {
            continue;
          }
          if (auto lu = limit_and_used(item.substr(ieq + 1))) {
            a.limits.push_back({std::string(key), std::string(item.substr(0, ieq)), lu->first, lu->second});
          }
        }
      }
    }
  }
  return out;
}

} // namespace rv::slurm
