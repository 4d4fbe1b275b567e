#include "app/run/notify.hpp"

#include "core/process/shell.hpp"
#include "core/secrets.hpp"
#include "sync/hash.hpp"

#include <fmt/format.h>

namespace rv::app {

Result<NotifyPlan> plan_notify(const Settings& settings, const std::string& webhook_secret,
                               const std::string& request_id)
{
  NotifyPlan plan;
  const auto& url = settings.notify_webhook;
  if (settings.notify_email.empty() && url.empty()) {
    return fail(ErrorCode::config, "--notify: no address to notify",
                "rv config set notify_email you@example.org, and/or rv config set notify_webhook https://...");
  }
  plan.mail_user = settings.notify_email;
  if (url.empty()) {
    return plan;
  }
  if (!(url.starts_with("https://") || url.starts_with("http://")) || url.find_first_of("\n\r\"\\ ") != url.npos) {
    return fail(ErrorCode::config, fmt::format("notify_webhook '{}' is not an http(s) URL", url),
                "rv config set notify_webhook https://hooks.example.org/rv");
  }
  if (webhook_secret.empty()) {
    return fail(ErrorCode::config, "--notify: the webhook needs a signing secret",
                fmt::format("rv env set {} (the receiver checks signatures with it)", secrets::k_webhook_secret));
  }
  plan.webhook = true;
  plan.secrets_lines = fmt::format("# rv --notify: for the job script only (not exported)\n_rv_notify_url={}\n"
                                   "_rv_notify_key={}\n",
                                   proc::shell_quote(url), sync::hmac_sha256_hex(webhook_secret, request_id));
  return plan;
}

} // namespace rv::app
