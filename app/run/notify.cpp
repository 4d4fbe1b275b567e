#include "app/run/notify.hpp"

#include "core/process/shell.hpp"
#include "core/secrets.hpp"
#include "sync/hash.hpp"

#include <fmt/format.h>

namespace rv::app {
namespace {

std::string from_hex(std::string_view hex)
{
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

} // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view data)
{
  constexpr std::size_t block = 64;
  std::string k = key.size() > block ? from_hex(sync::sha256_hex(key)) : std::string(key);
  k.resize(block, '\0');
  std::string inner(block, '\0'), outer(block, '\0');
  for (std::size_t i = 0; i < block; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  inner.append(data);
  outer += from_hex(sync::sha256_hex(inner));
  return sync::sha256_hex(outer);
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
                                   proc::shell_quote(url), hmac_sha256_hex(webhook_secret, request_id));
  return plan;
}

} // namespace rv::app
