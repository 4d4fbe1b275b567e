#pragma once
// `--notify` (docs/notifications.md): what a request's jobs are told to do. Slurm mails
// `notify_email`; the job POSTs signed JSON events to `notify_webhook`. The job never holds the
// webhook secret itself: its key is HMAC-SHA256(secret, request id), written to the request's
// secrets file with the URL, so a receiver that knows the secret can check every request.

#include "app/settings.hpp"
#include "core/result.hpp"

#include <string>
#include <string_view>

namespace rv::app {

// Whether `url` is http:// to this machine (127.0.0.1, localhost, [::1]): no warning for those.
bool loopback_url(std::string_view url);

struct NotifyPlan {
  std::string mail_user;     // #SBATCH --mail-user; "" = no mail
  bool webhook = false;      // the job POSTs events
  std::string secrets_lines; // `_rv_notify_url=...` and `_rv_notify_key=...` for the secrets file
};

// What --notify asks of request `request_id`, from the config and the webhook secret ("" = not
// set). A config error when neither notify_email nor notify_webhook is set, when the URL is not
// http(s), or when a webhook has no secret. A plain http:// URL to another host is warned about.
Result<NotifyPlan> plan_notify(const Settings& settings, const std::string& webhook_secret,
                               const std::string& request_id);

} // namespace rv::app
