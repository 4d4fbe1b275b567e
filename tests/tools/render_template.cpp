// rv_render_template: renders one sbatch script from flags, for tests/integration/test_templates.sh
// (until `rv run --dry-run` can print scripts). Not installed; not a user tool.
//
//   rv_render_template --root DIR --job-name NAME (--command CMD | --command-file FILE)
//     [--kind direct|checkpoint] [--nodes N] [--partition P] [--gres G] [--gpus-per-node N]
//     [--cpus N] [--mem-mb N] [--walltime S] [--time-min S] [--total S] [--constraint C]
//     [--account A] [--request-id ID] [--signal SIG] [--lead S] [--no-requeue] [--workdir DIR]

#include "templates/render.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

int main(int argc, char** argv)
{
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--no-requeue") {
      flags[arg] = "1";
    } else if (arg.starts_with("--") && i + 1 < argc) {
      flags[arg] = argv[++i];
    } else {
      std::cerr << "rv_render_template: bad argument " << arg << "\n";
      return 2;
    }
  }
  auto get = [&](const std::string& key, const std::string& fallback) {
    auto it = flags.find(key);
    return it == flags.end() ? fallback : it->second;
  };
  auto num = [&](const std::string& key, long long fallback) { return std::stoll(get(key, std::to_string(fallback))); };

  rv::model::Strategy s;
  s.id = "it";
  s.partition = get("--partition", "");
  s.gres = get("--gres", "");
  s.constraint = get("--constraint", "");
  s.nodes = static_cast<int>(num("--nodes", 1));
  s.gpus_per_node = static_cast<int>(num("--gpus-per-node", 0));
  s.cpus_per_task = static_cast<int>(num("--cpus", 1));
  s.mem_mb_per_node = num("--mem-mb", 0);
  s.walltime_s = num("--walltime", 120);
  s.time_min_s = num("--time-min", 0);
  s.total_time_s = num("--total", s.walltime_s);
  s.kind =
      get("--kind", "direct") == "checkpoint" ? rv::model::StrategyKind::checkpoint : rv::model::StrategyKind::direct;
  rv::model::JobRequest r;
  r.job_name = get("--job-name", "rv-it");
  r.account = get("--account", "");
  r.time_s = s.total_time_s;

  rv::templates::RenderOptions o;
  const auto root = get("--root", "/tmp/rv-it");
  o.request_id = get("--request-id", "");
  o.log_dir = root + "/logs";
  o.remote_root = root + "/rv";
  o.checkpoint_root = root + "/checkpoints";
  o.project_key = "it";
  o.output_root = root + "/outputs";
  o.cache_root = root + "/cache";
  o.workdir = get("--workdir", "");
  o.signal = get("--signal", "USR1");
  o.signal_lead_s = num("--lead", 300);
  o.use_requeue = !flags.contains("--no-requeue");
  if (flags.contains("--command-file")) {
    std::ifstream in(flags["--command-file"], std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    o.command = text.str();
  } else {
    o.command = get("--command", "");
  }
  auto script = rv::templates::render(s, r, o);
  if (!script) {
    std::cerr << "rv: error: " << script.error().message << "\n";
    if (!script.error().hint.empty()) {
      std::cerr << "rv: hint: " << script.error().hint << "\n";
    }
    return 2;
  }
  std::cout << *script;
  return 0;
}
