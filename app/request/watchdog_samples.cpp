#include "app/request/watchdog_samples.hpp"

#include "core/duration.hpp"
#include "core/text.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/job_state.hpp"
#include "templates/watchdog.hpp"

#include <algorithm>
#include <charconv>

namespace rv::app {
namespace {

std::optional<std::int64_t> number(std::string_view s)
{
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size() || v < 0) {
    return std::nullopt;
  }
  return v;
}

// "35,?,0" -> {35, nullopt, 0}; false when an item is neither a number nor `?`.
template <class T>
bool read_list(std::string_view s, std::vector<std::optional<T>>& out)
{
  for (auto item : text::split(s, ",")) {
    if (item == "?") {
      out.emplace_back();
      continue;
    }
    auto n = number(item);
    if (!n || *n > std::int64_t{1} << 40) {
      return false;
    }
    out.emplace_back(static_cast<T>(*n));
  }
  return true;
}

struct Streak {
  bool any = false;       // the newest sample is in it
  std::int64_t since = 0; // the first sample of the streak
  bool from_first = false;
};

// The trailing run of samples for which `same(sample)` holds.
template <class Pred>
Streak trailing(const std::vector<const WatchdogSample*>& s, Pred same)
{
  Streak st;
  for (auto i = s.size(); i-- > 0;) {
    if (!same(*s[i])) {
      break;
    }
    st.any = true;
    st.since = s[i]->t;
    st.from_first = i == 0;
  }
  return st;
}

bool all_zero(const WatchdogSample& s)
{
  return s.read && !s.util.empty() &&
         std::all_of(s.util.begin(), s.util.end(), [](const std::optional<int>& u) { return u && *u == 0; });
}

} // namespace

std::vector<WatchdogSample> parse_samples(std::string_view text)
{
  std::vector<WatchdogSample> out;
  const auto all = text::lines(text);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i + 1 == all.size() && !text.ends_with('\n')) {
      break; // being written
    }
    WatchdogSample s;
    bool t = false, job = false, util = false, mem = false, ok = true;
    for (auto word : text::split_ws(all[i])) {
      auto eq = word.find('=');
      if (eq == std::string_view::npos) {
        ok = false;
        break;
      }
      auto key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "t") {
        auto n = number(value);
        ok = ok && n.has_value();
        s.t = n.value_or(0);
        t = true;
      } else if (key == "job") {
        s.job = std::string(value);
        job = !value.empty();
      } else if (key == "util") {
        util = true;
        s.read = value != "-";
        ok = ok && (!s.read || read_list(value, s.util));
      } else if (key == "mem") {
        mem = true;
        ok = ok && (value == "-" || read_list(value, s.mem));
      } else if (key == "log") {
        s.log_bytes = number(value);
      } // later keys: ignored
    }
    if (ok && t && job && util && mem) {
      out.push_back(std::move(s));
    }
  }
  return out;
}

Activity assess(const std::map<std::string, std::vector<WatchdogSample>>& by_node,
                const std::vector<std::string>& nodes, const std::string& job_id, std::int64_t interval_s,
                bool multi_node)
{
  Activity a;
  std::map<std::string, std::vector<const WatchdogSample*>> mine;
  std::map<std::string, bool> cut; // the file held more lines than were read
  for (const auto& n : nodes) {
    auto it = by_node.find(n);
    if (it == by_node.end()) {
      continue;
    }
    cut[n] = it->second.size() >= static_cast<std::size_t>(k_samples_read);
    for (const auto& s : it->second) {
      if (s.job == job_id) {
        mine[n].push_back(&s);
      }
    }
  }
  a.nodes = static_cast<int>(mine.size());
  if (mine.empty()) {
    return a;
  }
  std::int64_t interval = std::max<std::int64_t>(1, interval_s);
  for (const auto& [n, s] : mine) {
    a.sampled_at = std::max(a.sampled_at, s.back()->t);
    if (s.size() >= 2 && s.back()->t > s[s.size() - 2]->t) {
      interval = s.back()->t - s[s.size() - 2]->t;
    }
  }
  if (mine.size() < nodes.size()) {
    return a; // a node without samples: neither idle nor flat
  }
  std::int64_t idle_since = 0, flat_since = 0, last = a.sampled_at;
  bool idle = true, flat = true, idle_first = false, flat_first = false;
  for (const auto& [n, s] : mine) {
    const auto& newest = *s.back();
    if (newest.t < a.sampled_at - 3 * interval) {
      return a; // stale: that node's sampler stopped
    }
    last = std::min(last, newest.t);
    auto i = trailing(s, all_zero);
    auto f = trailing(s, [&](const WatchdogSample& x) {
      return x.read && newest.read && x.util == newest.util && x.mem == newest.mem && x.log_bytes == newest.log_bytes;
    });
    idle = idle && i.any;
    flat = flat && f.any;
    idle_since = std::max(idle_since, i.since);
    flat_since = std::max(flat_since, f.since);
    idle_first = idle_first || (i.from_first && cut[n]);
    flat_first = flat_first || (f.from_first && cut[n]);
  }
  if (idle) {
    a.idle_s = std::max<std::int64_t>(0, last - idle_since);
  }
  if (flat) {
    a.flat_s = std::max<std::int64_t>(0, last - flat_since);
  }
  a.hang = multi_node && a.flat_s && *a.flat_s >= k_hang_shown_intervals * interval;
  // What is shown is decided here, once: a streak shorter than its threshold is not idle yet.
  if (a.idle_s && *a.idle_s < k_idle_shown_intervals * interval) {
    a.idle_s.reset();
  }
  a.at_least = a.hang ? flat_first : a.idle_s && idle_first;
  return a;
}

std::string activity_text(const Activity& a)
{
  const char* plus = a.at_least ? "+" : "";
  if (a.hang && a.flat_s) {
    return "hang? " + format_human_duration(*a.flat_s) + plus;
  }
  if (a.idle_s) {
    return "idle " + format_human_duration(*a.idle_s) + plus;
  }
  return {};
}

nlohmann::json to_json(const Activity& a)
{
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"idle_s", opt(a.idle_s)},
          {"flat_s", opt(a.flat_s)},
          {"hang", a.hang},
          {"at_least", a.at_least},
          {"sampled_at", a.sampled_at > 0 ? nlohmann::json(a.sampled_at) : nlohmann::json(nullptr)},
          {"nodes", a.nodes},
          {"text", activity_text(a)}};
}

proc::Command samples_command(const std::vector<std::string>& dirs)
{
  proc::Command c;
  c.argv = {"sh", "-c",
            "for d in \"$@\"; do for f in \"$d\"/*.samples; do [ -f \"$f\" ] || continue; "
            "printf '==> %s\\n' \"$f\"; tail -n " +
                std::to_string(k_samples_read) + " -- \"$f\"; done; done; true",
            "rv-samples"};
  c.argv.insert(c.argv.end(), dirs.begin(), dirs.end());
  c.timeout = std::chrono::seconds(30);
  return c;
}

std::map<std::string, std::map<std::string, std::vector<WatchdogSample>>> split_samples(std::string_view out)
{
  std::map<std::string, std::map<std::string, std::vector<WatchdogSample>>> all;
  std::string dir, node, body;
  auto flush = [&] {
    if (!dir.empty()) {
      all[dir][node] = parse_samples(body);
    }
    body.clear();
  };
  for (auto line : text::lines(out)) {
    if (line.starts_with("==> ") && line.ends_with(".samples")) {
      flush();
      auto path = line.substr(4, line.size() - 4 - std::string_view(".samples").size());
      auto slash = path.rfind('/');
      dir = slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
      node = std::string(path.substr(slash + 1));
      continue;
    }
    body.append(line).push_back('\n');
  }
  flush();
  return all;
}

namespace {

const JobRecord* running_winner(const RequestRecord& r)
{
  const auto* w = r.winner_job();
  return w && w->state == slurm::JobState::running ? w : nullptr;
}

} // namespace

std::vector<std::string> running_watchdog_dirs(const std::vector<RequestRecord>& requests)
{
  std::vector<std::string> dirs;
  for (const auto& r : requests) {
    if (running_winner(r) && !r.remote_root.empty() && r.remote_root.front() == '/') {
      dirs.push_back(templates::watchdog_dir(r.remote_root, r.id));
    }
  }
  return dirs;
}

std::optional<Activity>
activity_of(const RequestRecord& r,
            const std::map<std::string, std::map<std::string, std::vector<WatchdogSample>>>& all,
            std::int64_t interval_s)
{
  const auto* w = running_winner(r);
  auto it = all.find(templates::watchdog_dir(r.remote_root, r.id));
  if (!w || it == all.end()) {
    return std::nullopt;
  }
  auto nodes = slurm::expand_hostlist(w->node_list);
  if (!nodes || nodes->empty()) {
    return std::nullopt;
  }
  auto a = assess(it->second, *nodes, w->job_id, interval_s, nodes->size() > 1);
  if (a.nodes == 0) {
    return std::nullopt;
  }
  return a;
}

std::optional<std::pair<int, std::string>> read_watchdog_end(proc::Runner& runner, const RequestRecord& r,
                                                             const std::string& job_id)
{
  proc::Command c;
  c.argv = {"cat", "--", templates::watchdog_dir(r.remote_root, r.id) + "/ended." + job_id};
  c.timeout = std::chrono::seconds(30);
  auto o = runner.run(c);
  if (!o || !o->ok()) {
    return std::nullopt;
  }
  const std::string first = o->out.substr(0, o->out.find('\n'));
  const auto line = text::trim(first);
  auto sp = line.find(' ');
  auto code = number(line.substr(0, sp));
  if (!code || *code > 255) {
    return std::nullopt;
  }
  return std::pair{static_cast<int>(*code),
                   sp == std::string_view::npos ? std::string() : std::string(line.substr(sp + 1))};
}

} // namespace rv::app
