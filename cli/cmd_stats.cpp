// `rv stats`: how far rv's wait predictions were off, per partition, over the user's recent
// requests (the local request records; no connection).

#include "app/run/plan/predictions.hpp"
#include "cli/commands.hpp"
#include "core/clock.hpp"
#include "core/store/json_bytes.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace rv::cli {
namespace {

struct StatsOptions {
  int last = 50;
  int days = 30;
};

Result<int> run_stats(const StatsOptions& opts, Context& ctx)
{
  if (opts.last < 1 || opts.days < 1) {
    return fail(ErrorCode::usage,
                fmt::format("--last and --days must be at least 1 (got {} and {})", opts.last, opts.days),
                "e.g. rv stats --last 100 --days 14");
  }
  auto store = request_store();
  std::vector<std::string> skipped;
  RV_TRY(docs, store.list(&skipped));
  std::vector<app::RequestRecord> records;
  for (const auto& d : docs) {
    if (auto r = app::request_from_json(d)) {
      records.push_back(std::move(*r));
    }
  }
  SystemClock clock;
  auto stats = app::prediction_stats(records, clock.epoch_seconds(), {opts.last, opts.days});
  if (ctx.global.json) {
    std::fputs((store::dump_for_display(stats) + "\n").c_str(), stdout);
  } else {
    std::fputs(app::format_prediction_stats(stats).c_str(), stdout);
  }
  return 0;
}

} // namespace

void setup_stats(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<StatsOptions>();
  auto* cmd = app.add_subcommand(
      "stats", "how far rv's wait predictions, and Slurm's own estimates, were off, per partition (recent requests)");
  cmd->add_option("--last", opts->last, "the newest N requests (default 50)")->type_name("N");
  cmd->add_option("--days", opts->days, "of the last D days (default 30)")->type_name("D");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_stats(*opts, ctx); }; });
}

} // namespace rv::cli
