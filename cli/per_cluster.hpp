#pragma once
// How `rv status` and `rv cost` show one answer per cluster (docs/multi-cluster.md): a `== HOST ==`
// section each, or with --json {"clusters": [{"host", ...their fields | "error"}]}; exit 1 when a
// cluster could not be asked.

#include "app/clusters.hpp"
#include "cli/commands.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace rv::cli {

template <class T>
int show_per_cluster(bool json, const std::vector<app::OnCluster<T>>& all,
                     const std::function<nlohmann::json(const std::string& host, const T&)>& fields,
                     const std::function<std::string(const std::string& host, const T&)>& section)
{
  nlohmann::json doc = {{"clusters", nlohmann::json::array()}};
  int rc = 0;
  for (const auto& c : all) {
    if (!c.result) {
      rc = 1;
      doc["clusters"].push_back({{"host", c.host}, {"error", c.result.error().message}});
      if (!json) {
        std::fputs(fmt::format("== {} ==\n  cannot reach it: {}\n\n", c.host, c.result.error().message).c_str(),
                   stdout);
      }
      continue;
    }
    auto entry = fields(c.host, *c.result);
    entry["host"] = c.host;
    doc["clusters"].push_back(std::move(entry));
    if (!json) {
      std::fputs((section(c.host, *c.result) + "\n").c_str(), stdout);
    }
  }
  if (json) {
    print_json(doc);
  }
  return rc;
}

} // namespace rv::cli
