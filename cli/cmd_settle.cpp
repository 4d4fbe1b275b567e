// `rv _settle REQUEST` (hidden): the background rv that `rv run` without -f leaves behind for a
// request raced across clusters: it chooses the first cluster whose job starts, cancels the others,
// and exits (app/run/launch/cluster_race.hpp, docs/multi-cluster.md). For a study it keeps the pool of
// workers topped up until every task ended (app/run/study_run.hpp, docs/studies.md).

#include "app/request/requests.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "app/run/study_run.hpp"
#include "cli/commands.hpp"

namespace rv::cli {

void setup_settle(CLI::App& app, Context& ctx)
{
  auto id = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("_settle", "settle a race across clusters (started by rv run)");
  cmd->group(""); // hidden: rv starts it, people do not
  cmd->add_option("REQUEST", *id, "a member request of the race")->required();
  cmd->callback([&ctx, id] {
    ctx.action = [&ctx, id]() -> Result<int> {
      RV_TRY(real, ctx.make_env_for_request(*id)); // the request's own cluster, whatever --host said
      if (auto j = real->env.requests.read(*id); j && j->contains("study") && !(*j)["study"].is_null()) {
        return app::settle_study(real->env, *id); // a study's pool (docs/studies.md)
      }
      return app::settle_race(real->env, *id);
    };
  });
}

} // namespace rv::cli
