// `rv doctor`: the checks of app/doctor/doctor.hpp, printed as a list or as one JSON document.

#include "app/doctor/doctor.hpp"
#include "cli/commands.hpp"

#include <cstdio>

namespace rv::cli {
using namespace rv::app;
namespace {

Result<int> run_doctor_command(const DoctorOptions& opts, Context& ctx)
{
  RV_TRY(real, ctx.make_env());
  RV_TRY(report, run_doctor(real->env, opts));
  if (ctx.global.json) {
    print_json(to_json(report));
  } else {
    std::fputs(doctor_text(report).c_str(), stdout);
  }
  return report.exit_code;
}

} // namespace

void setup_doctor(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<DoctorOptions>();
  auto* cmd = app.add_subcommand("doctor", "check the connection, Slurm, your account, the workspace and a GPU job");
  cmd->add_flag("--quick", opts->quick, "skip the test GPU job (login-node checks only)");
  cmd->add_option("-p,--partition", opts->partition,
                  "partition of the test GPU job (default: the cheapest with a free GPU)")
      ->type_name("PARTITION");
  cmd->add_option("--image", opts->container_image,
                  "container image to test GPU visibility in (apptainer/singularity --nv; default: the site "
                  "profile's container_image)")
      ->type_name("IMAGE");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_doctor_command(*opts, ctx); }; });
}

} // namespace rv::cli
