// `rv gpu`'s output: the table, the JSON document, and the --watch loop.

#include "app/node/gpu.hpp"

#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/printable.hpp"
#include "core/store/json_bytes.hpp"
#include "core/text.hpp"
#include "core/utc_time.hpp"

#include <fmt/format.h>

namespace rv::app {
namespace {

template <class T>
nlohmann::json or_null(const std::optional<T>& v)
{
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The GPU index a process runs on (by UUID, else PCI bus id), or nullopt.
std::optional<int> gpu_index_of(const NodeGpus& n, const slurm::GpuProcess& p)
{
  for (const auto& g : n.gpus) {
    if ((!p.gpu_uuid.empty() && p.gpu_uuid == g.uuid) || (!p.gpu_bus_id.empty() && p.gpu_bus_id == g.bus_id)) {
      return g.index;
    }
  }
  return std::nullopt;
}

std::string processes_on(const NodeGpus& n, int index)
{
  std::vector<std::string> out;
  for (const auto& p : n.processes) {
    if (gpu_index_of(n, p) == index) {
      auto name = p.name.substr(p.name.rfind('/') == std::string::npos ? 0 : p.name.rfind('/') + 1);
      out.push_back(p.used_mib ? fmt::format("{} {} ({} MiB)", p.pid, name, *p.used_mib)
                               : fmt::format("{} {}", p.pid, name));
    }
  }
  return out.empty() ? "-" : text::join(out, ", ");
}

std::string optional_text(const std::optional<int>& v, std::string_view unit)
{
  return v ? fmt::format("{}{}", *v, unit) : std::string("n/a");
}

} // namespace

std::string gpu_table(const GpuReport& r)
{
  std::string out = fmt::format("request {}  job {}", r.request_id, r.job_id);
  if (r.activity && !activity_text(*r.activity).empty()) {
    out += "  " + activity_text(*r.activity);
  }
  out += "\n";
  out += fmt::format("{:<12} {:>3}  {:<24} {:>5}  {:>19}  {:>5}  {}\n", "NODE", "GPU", "NAME", "UTIL", "MEMORY", "TEMP",
                     "PROCESSES");
  for (const auto& n : r.nodes) {
    if (!n.error.empty()) {
      out += fmt::format("{:<12} {:>3}  {}\n", n.node, "-", n.error);
      continue;
    }
    if (n.gpus.empty()) {
      out += fmt::format("{:<12} {:>3}  {}\n", n.node, "-", "no GPU visible to the job here");
    }
    for (const auto& g : n.gpus) {
      const auto mem = g.mem_used_mib && g.mem_total_mib
                           ? fmt::format("{}/{} MiB", *g.mem_used_mib, *g.mem_total_mib)
                           : fmt::format("{}/{} MiB", g.mem_used_mib ? std::to_string(*g.mem_used_mib) : "n/a",
                                         g.mem_total_mib ? std::to_string(*g.mem_total_mib) : "n/a");
      out += fmt::format("{:<12} {:>3}  {:<24} {:>5}  {:>19}  {:>5}  {}\n", n.node, g.index, text::shorten(g.name, 24),
                         optional_text(g.util_pct, "%"), mem, optional_text(g.temp_c, "C"), processes_on(n, g.index));
    }
  }
  return printable(out);
}

nlohmann::json to_json(const GpuReport& r)
{
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : r.nodes) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : n.gpus) {
      gpus.push_back({{"index", g.index},
                      {"name", g.name},
                      {"uuid", g.uuid},
                      {"bus_id", g.bus_id},
                      {"util_pct", or_null(g.util_pct)},
                      {"mem_used_mib", or_null(g.mem_used_mib)},
                      {"mem_total_mib", or_null(g.mem_total_mib)},
                      {"temp_c", or_null(g.temp_c)}});
    }
    nlohmann::json procs = nlohmann::json::array();
    for (const auto& p : n.processes) {
      procs.push_back({{"pid", p.pid},
                       {"name", p.name},
                       {"gpu_index", or_null(gpu_index_of(n, p))},
                       {"gpu_uuid", p.gpu_uuid},
                       {"used_mib", or_null(p.used_mib)}});
    }
    nodes.push_back({{"node", n.node},
                     {"error", n.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.error)},
                     {"gpus", gpus},
                     {"processes", procs}});
  }
  return {{"request", r.request_id},
          {"job_id", r.job_id},
          {"time", r.time},
          {"watchdog", r.activity ? to_json(*r.activity) : nlohmann::json(nullptr)},
          {"nodes", nodes}};
}

Result<int> show_gpus(Env& env, const GpuOptions& opts)
{
  if (opts.watch && (*opts.watch < 1 || *opts.watch > 3600)) {
    return fail(ErrorCode::usage, fmt::format("--watch {}: the interval is out of range", *opts.watch),
                "use 1 to 3600 seconds (default 2)");
  }
  RV_TRY(target, gpu_target(env, opts.key));
  const bool redraw = opts.watch && !env.json && env.output.terminal().tty;
  for (bool first = true;; first = false) {
    auto report = query_gpus(env, target, opts.node);
    if (!report) {
      if (!first && interrupt_signal() != 0) {
        return 0; // Ctrl-C during a refresh: a clean end
      }
      return std::unexpected(report.error());
    }
    if (env.json) {
      // --watch: one compact document per line
      env.output.out(store::dump_for_display(to_json(*report), opts.watch ? -1 : 2) + "\n");
    } else {
      auto text = gpu_table(*report);
      if (opts.watch) {
        text = fmt::format("every {}s, {} (Ctrl-C ends)\n", *opts.watch, utc_iso(report->time)) + text;
      }
      // On a terminal the screen is redrawn from the top; elsewhere one table follows another.
      env.output.out(redraw ? "\x1b[H\x1b[2J" + text : (first ? "" : "\n") + text);
    }
    if (!opts.watch) {
      return 0;
    }
    env.clock.sleep_for(std::chrono::seconds(*opts.watch));
    if (interrupt_signal() != 0) {
      clear_interrupt();
      return 0; // Ctrl-C ends --watch cleanly
    }
  }
}

} // namespace rv::app
