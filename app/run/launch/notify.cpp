#include "app/run/launch/notify.hpp"

#include "core/config.hpp"
#include "core/printable.hpp"
#include "core/process/shell.hpp"
#include "core/secrets.hpp"
#include "sync/hash.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rv::app {

bool loopback_url(std::string_view url)
{
  for (std::string_view host : {"http://127.0.0.1", "http://localhost", "http://[::1]"}) {
    if (url.starts_with(host) && (url.size() == host.size() || url[host.size()] == ':' || url[host.size()] == '/')) {
      return true;
    }
  }
  return false;
}

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
  if (!is_http_url(url)) { // config set refuses it too; Settings may come from elsewhere
    return fail(ErrorCode::config, fmt::format("notify_webhook '{}' is not an http(s) URL", url),
                "rv config set notify_webhook https://hooks.example.org/rv");
  }
  if (url.starts_with("http://") && !loopback_url(url)) {
    spdlog::warn("notify_webhook {} is plain http: the events (and a hook URL that is itself a secret) travel "
                 "unencrypted; use https://",
                 printable(url));
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
