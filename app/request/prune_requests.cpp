#include "app/request/prune_requests.hpp"

#include "app/env.hpp"
#include "app/request/reap.hpp"
#include "core/utc_time.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>

namespace rv::app {

bool prunable(const RequestRecord& r, std::int64_t now_s, std::int64_t keep_s)
{
  if (keep_s <= 0 || !r.pruned_at.empty() || !is_final_state(r.state) || !request_finished(r)) {
    return false;
  }
  if (!r.remote_root.starts_with('/') || !r.log_dir.starts_with('/') || r.id.empty() ||
      r.id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != std::string::npos) {
    return false; // never an rm -rf of a path rv cannot vouch for
  }
  auto created = parse_utc_iso(r.created_at);
  return created && now_s - *created >= keep_s;
}

proc::Command prune_command(const std::vector<const RequestRecord*>& requests)
{
  proc::Command c;
  c.argv = {"sh", "-c",
            "s=0; for a in \"$@\"; do p=${a#?}; case $a in "
            "D*) rm -rf -- \"$p\" || s=1 ;; "
            "L*) rm -f -- \"$p\".out \"$p\".err \"$p\".node*.out \"$p\".node*.err || s=1 ;; "
            "esac; done; exit $s",
            "rv-prune"};
  for (const auto* r : requests) {
    c.argv.push_back("D" + r->remote_root + "/requests/" + r->id);
    for (const auto& j : r->jobs) {
      if (!j.job_id.empty()) {
        c.argv.push_back(fmt::format("L{}/{}-{}", r->log_dir, r->name, j.job_id));
      }
    }
  }
  c.timeout = std::chrono::seconds(120);
  return c;
}

void prune_remote_state(proc::Runner& runner, Clock& clock, store::RecordStore& store,
                        const std::vector<RequestRecord*>& requests, std::int64_t keep_s)
{
  const auto now = clock.epoch_seconds();
  std::vector<RequestRecord*> due;
  for (auto* r : requests) {
    if (prunable(*r, now, keep_s)) {
      due.push_back(r);
    }
  }
  if (due.empty()) {
    return;
  }
  auto o = runner.run(prune_command({due.begin(), due.end()}));
  if (!o || !o->ok()) {
    spdlog::warn("could not remove the cluster state of {} finished request(s): {}", due.size(),
                 o ? o->err : o.error().message);
    return;
  }
  for (auto* r : due) {
    r->pruned_at = utc_iso(now);
    r->secrets_file.clear(); // it lived in the request's directory
    save(store, *r);
    std::error_code ec;
    std::filesystem::remove(settle_log_path(store, r->id), ec);   // a race's settler, long over
    std::filesystem::remove(tending_lock_path(store, r->id), ec); // a study's, long over
  }
  spdlog::info("removed the cluster state and logs of {} request(s) older than {} days", due.size(), keep_s / 86400);
}

} // namespace rv::app
