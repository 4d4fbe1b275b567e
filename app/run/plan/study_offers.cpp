#include "app/run/plan/study_offers.hpp"

#include <algorithm>
#include <sstream>

namespace rv::app::study {

OfferPlan plan_offers(const OfferInput& in)
{
  OfferPlan plan;
  const std::size_t n = in.clusters.size();
  std::vector<int> want(n, 0);
  for (std::size_t c = 0; c < n; ++c) {
    const auto& w = in.clusters[c];
    // An offer for each idle worker now, and each busy worker's next task before its task ends (a
    // worker that finds none waits for rv's next round, billed: up to a poll per task), and the
    // prefetch for a worker about to start.
    want[c] = w.running > 0 ? std::max(0, w.running - w.busy) + w.busy + in.prefetch : 0;
  }
  // The open offers each cluster keeps: the first `want` in task order; the rest are taken back.
  std::vector<std::vector<Offer>> kept(n);
  auto open = in.open;
  std::sort(open.begin(), open.end(), [](const Offer& a, const Offer& b) { return a.task < b.task; });
  for (const auto& o : open) {
    if (o.cluster < n && static_cast<int>(kept[o.cluster].size()) < want[o.cluster]) {
      kept[o.cluster].push_back(o);
    } else {
      plan.revoke.push_back(o);
    }
  }
  // New offers: the waiting tasks in order, the clusters with room in turn.
  std::size_t next = 0;
  for (bool any = true; any && next < in.waiting.size();) {
    any = false;
    for (std::size_t c = 0; c < n && next < in.waiting.size(); ++c) {
      if (static_cast<int>(kept[c].size()) < want[c]) {
        const auto& [task, attempt] = in.waiting[next++];
        kept[c].push_back({task, attempt, c});
        plan.make.push_back(kept[c].back());
        any = true;
      }
    }
  }
  if (next < in.waiting.size()) {
    return plan;
  }
  // Nothing left waiting: a cluster whose workers run with no offer gets one taken back from a
  // cluster holding two or more (its last), offered to it at the next step.
  for (std::size_t c = 0; c < n; ++c) {
    if (want[c] == 0 || !kept[c].empty()) {
      continue;
    }
    for (std::size_t d = 0; d < n; ++d) {
      if (d == c || kept[d].size() < 2) {
        continue;
      }
      const auto o = kept[d].back();
      kept[d].pop_back();
      if (std::find(plan.make.begin(), plan.make.end(), o) != plan.make.end()) {
        plan.make.erase(std::find(plan.make.begin(), plan.make.end(), o)); // not made yet: simply not made
      } else {
        plan.revoke.push_back(o);
      }
      break;
    }
  }
  return plan;
}

std::vector<std::vector<std::size_t>> plan_pool_across(const std::vector<ClusterPool>& clusters,
                                                       std::int64_t task_time_s)
{
  std::vector<std::vector<std::size_t>> out(clusters.size());
  if (clusters.empty()) {
    return out;
  }
  std::vector<model::Strategy> all;
  std::vector<std::pair<std::size_t, std::size_t>> origin; // union index -> (cluster, its index)
  PoolInput in = clusters.front().in;                      // the study's: tasks, %K, task length, --prefer
  in.limits = {};                                          // each cluster's own, as its group's room
  in.other_jobs = 0;
  in.headroom = 0;
  in.workers_alive = 0;
  in.kinds.clear();
  in.group_room.clear();
  for (std::size_t c = 0; c < clusters.size(); ++c) {
    const auto& cp = clusters[c];
    // The ceiling this cluster's limits give it (MaxSubmitJobs, MaxJobs, GrpTRES less its other
    // jobs and the headroom), less its workers alive that are not pending (pending ones may be
    // kept, and count when they are).
    const int target = pool_ceiling(cp.strategies, cp.in).target;
    int pending = 0;
    for (const auto& k : cp.in.kinds) {
      pending += k.pending;
    }
    in.group_room.push_back(std::max(0, target - std::max(0, cp.in.workers_alive - pending)));
    in.workers_alive += cp.in.workers_alive;
    for (std::size_t k = 0; k < cp.strategies.size(); ++k) {
      auto s = cp.strategies[k];
      s.est_su *= cp.su_weight;
      all.push_back(std::move(s));
      auto kind = k < cp.in.kinds.size() ? cp.in.kinds[k] : KindPool{};
      kind.group = static_cast<int>(c);
      in.kinds.push_back(std::move(kind));
      origin.emplace_back(c, k);
    }
  }
  for (auto u : plan_pool(all, task_time_s, in).submit) {
    out[origin[u].first].push_back(origin[u].second);
  }
  return out;
}

std::vector<PlacedTask> merge_statuses(const std::vector<std::vector<TaskStatus>>& per_cluster)
{
  std::vector<PlacedTask> out;
  if (per_cluster.empty()) {
    return out;
  }
  for (std::size_t i = 0; i < per_cluster.front().size(); ++i) {
    PlacedTask p{per_cluster.front()[i], std::nullopt};
    for (std::size_t c = 0; c < per_cluster.size(); ++c) {
      if (i >= per_cluster[c].size()) {
        continue;
      }
      const auto& s = per_cluster[c][i];
      if (s.attempts > 0 && (!p.cluster || s.attempts > p.status.attempts)) {
        p = {s, c};
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

proc::Command offer_ops_command(const std::string& tasks_dir, const std::vector<OfferStep>& steps)
{
  // An offer is a directory holding `attempt`, made whole under another name and renamed into
  // place. A worker takes it by renaming it to `.claim.<job>` (then onto a<attempt>); rv takes it
  // back by renaming it to `.revoked.<attempt>`: of two renames of one name, one wins.
  static constexpr const char* k_script = R"sh(mkdir -p -- "$1" && cd -- "$1" || exit 1
shift
taken() {
  [ -e "$1/a$2" ] && return 0
  for c in "$1"/.claim.*; do
    [ -f "$c/attempt" ] && [ "$(cat -- "$c/attempt")" = "$2" ] && return 0
  done
  return 1
}
while [ $# -ge 3 ]; do
  op=$1 t=$2 k=$3
  shift 3
  case $op in
  offer)
    if [ -d "$t/offer" ]; then echo "$t open"
    elif taken "$t" "$k"; then echo "$t taken"
    elif mkdir -p -- "$t" && rm -rf -- "$t/.offer.new" && mkdir -- "$t/.offer.new" &&
      echo "$k" >"$t/.offer.new/attempt" && mv -T -- "$t/.offer.new" "$t/offer"; then rm -f .drained; echo "$t offered"
    else echo "$t error"; fi ;;
  revoke)
    rm -rf -- "$t/.revoked.$k"
    if mv -T -- "$t/offer" "$t/.revoked.$k" 2>/dev/null; then rm -rf -- "$t/.revoked.$k"; echo "$t revoked"
    elif taken "$t" "$k"; then echo "$t taken"
    elif [ ! -e "$t/offer" ]; then echo "$t gone"
    else echo "$t error"; fi ;;
  drain)
    if : >.drained; then echo "- drained"; else echo "- error"; fi ;;
  esac
done
)sh";
  proc::Command c;
  c.argv = {"sh", "-c", k_script, "sh", tasks_dir};
  for (const auto& s : steps) {
    c.argv.push_back(s.op == OfferOp::offer ? "offer" : (s.op == OfferOp::revoke ? "revoke" : "drain"));
    c.argv.push_back(std::to_string(s.task));
    c.argv.push_back(std::to_string(s.attempt));
  }
  return c;
}

std::map<int, std::string> parse_offer_ops(std::string_view out)
{
  std::map<int, std::string> found;
  std::istringstream in{std::string(out)};
  std::string t, word;
  while (in >> t >> word) {
    try {
      found[std::stoi(t)] = word;
    } catch (const std::exception&) {
    }
  }
  return found;
}

} // namespace rv::app::study
