#include "cli/job_flags.hpp"

#include "core/container.hpp"
#include "core/duration.hpp"

#include <fmt/format.h>

namespace rv::cli {
namespace {

// --idle-timeout in seconds (0 without it).
Result<std::int64_t> idle_timeout_seconds(const std::string& text)
{
  if (text.empty()) {
    return 0;
  }
  auto d = parse_duration(text);
  if (!d) {
    return fail(ErrorCode::usage, fmt::format("--idle-timeout {}: {}", text, d.error().message),
                "e.g. 30m or 2h: the job ends after that long with every GPU at 0 % (exit 95)");
  }
  return *d;
}

// --container and its mounts, checked by the one grammar (core/container.hpp); nullopt without.
Result<std::optional<model::ContainerOrder>> container_order(const JobFlags& f)
{
  if (f.container.empty()) {
    if (!f.container_mounts.empty()) {
      return fail(ErrorCode::usage, "--container-mount goes with --container",
                  "rv run --container docker://IMAGE --container-mount SRC:DST CMD");
    }
    return std::optional<model::ContainerOrder>();
  }
  RV_TRY(image, parse_container_image(f.container));
  model::ContainerOrder order{std::move(image), {}};
  for (const auto& m : f.container_mounts) {
    RV_TRY(mount, parse_container_mount(m));
    order.mounts.push_back(std::move(mount));
  }
  return std::optional<model::ContainerOrder>(std::move(order));
}

} // namespace

void add_job_flags(CLI::App* cmd, JobFlags& f)
{
  cmd->add_flag("--notify", f.notify,
                "tell notify_email (Slurm mail) and/or notify_webhook (signed POSTs from the job) when the job "
                "starts, ends or is resubmitted (docs/notifications.md)");
  cmd->add_flag("--no-preflight", f.no_preflight,
                "skip the in-job GPU check that runs on every node before the command (docs/preflight.md)");
  cmd->add_option("--idle-timeout", f.idle_timeout,
                  "end the job after this long (30m, 2h) with every GPU at 0 %: exit 95; a multi-node batch job "
                  "whose log and GPUs stay unchanged that long ends with 94 (docs/gpu.md)")
      ->type_name("DURATION");
  cmd->add_option("--env", f.env,
                  "KEY=VALUE: a variable for the job, exported byte for byte after rv's own; repeat for more "
                  "(not for secrets: they go through `rv env set`)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--workdir", f.smart.workdir,
                  "remote directory the command runs in, without syncing (default: the project's snapshot when "
                  "the command names a local file, else your home)")
      ->type_name("DIR");
  cmd->add_flag("--no-sync", f.smart.no_sync, "do not sync the project even if the command names local files");
  cmd->add_option("--container", f.container,
                  "run the command in this image: docker://REF, or an absolute .sif or enroot .sqsh path on the "
                  "cluster, with Pyxis or Apptainer as discovery found them (config container_runtime; "
                  "docs/containers.md)")
      ->type_name("IMAGE");
  cmd->add_option("--container-mount", f.container_mounts,
                  "SRC:DST[:ro]: also mount this node directory in the container (the work directory, the scratch "
                  "cache and rv's root always are); repeat for more")
      ->type_name("SRC:DST")
      ->allow_extra_args(false);
}

Result<app::JobOrder> job_order(const JobFlags& f, Context& ctx)
{
  app::JobOrder order;
  RV_TRY(request, to_request(f.plan, request_defaults(ctx.config)));
  RV_TRY(asked, time_asked_s(f.plan));
  RV_TRY(options, to_plan_options(f.plan, ctx.config.get("max_strategies"), ctx.config.get("time_scale")));
  RV_TRY(env, parse_env_flags(f.env));
  RV_TRY(idle_timeout, idle_timeout_seconds(f.idle_timeout));
  RV_TRY(container, container_order(f));
  request.container = std::move(container);
  if (f.plan.no_cache) {
    RV_TRY_VOID(ctx.config.set("discovery_cache", "0", Origin::flag));
  }
  order.request = std::move(request);
  order.task_time_s = asked;
  order.plan_options = std::move(options);
  order.dry_run = f.plan.dry_run;
  order.smart = f.smart;
  order.smart.container = order.request.container.has_value(); // no venv for a container's job
  order.env = std::move(env);
  order.notify = f.notify;
  order.preflight = !f.no_preflight;
  order.idle_timeout_s = idle_timeout;
  order.secrets = f.secrets;
  return order;
}

} // namespace rv::cli
