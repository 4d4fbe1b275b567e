#pragma once
// One command on several clusters at once (docs/multi-cluster.md): each host's Env opened through
// env.clusters, then `fn` run on every one in parallel, so that the whole takes as long as the
// slowest cluster alone. The one home of that fan-out: rv run/up's plans, rv cost, rv status.

#include "app/env.hpp"

#include <functional>
#include <future>
#include <string>
#include <utility>
#include <vector>

namespace rv::app {

template <class T>
struct OnCluster {
  std::string host;   // as the user named it
  Env* env = nullptr; // nullptr when it could not be opened
  Result<T> result;   // fn's answer, or why the cluster could not be asked
};

template <class T>
std::vector<OnCluster<T>> on_every_cluster(Env& env, const std::vector<std::string>& hosts,
                                           const std::function<Result<T>(Env&)>& fn)
{
  std::vector<OnCluster<T>> out;
  std::vector<std::future<Result<T>>> running;
  for (const auto& h : hosts) {
    auto opened = env.clusters ? env.clusters->open(h) : Result<Env*>(&env);
    if (!opened) {
      out.push_back({h, nullptr, std::unexpected(opened.error())});
      running.emplace_back();
      continue;
    }
    out.push_back({h, *opened, std::unexpected(Error{})});
    running.push_back(std::async(std::launch::async, [&fn, e = *opened] { return fn(*e); }));
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (running[i].valid()) {
      out[i].result = running[i].get();
    }
  }
  return out;
}

} // namespace rv::app
