// Notifications (docs/notifications.md): Slurm's own mail, and signed JSON events the job POSTs
// to a webhook. The URL and the request's key arrive in the secrets file, never in this script.

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

namespace rv::templates::detail {
namespace {

// HMAC-SHA256 in bash and coreutils' sha256sum: the key is a function argument (never a
// process's argv) and the data goes through pipes. Keys are 32 bytes (64 hex digits).
constexpr std::string_view k_notify_functions = R"sh(
# ---- notifications (docs/notifications.md): signed JSON events to the webhook ----
# HMAC-SHA256 (hex) of stdin with the key KEYHEX; the key never reaches a command's argv.
_rv_hmac_sha256() {
  local key=$1 ipad="" opad="" i byte inner
  while [ "${#key}" -lt 128 ]; do key="${key}00"; done
  for ((i = 0; i < 128; i += 2)); do
    byte=$((16#${key:i:2}))
    ipad+=$(printf '\\x%02x' $((byte ^ 0x36)))
    opad+=$(printf '\\x%02x' $((byte ^ 0x5c)))
  done
  # shellcheck disable=SC2059  # the formats are the escaped pad bytes
  inner=$({ printf "$ipad"; cat; } | sha256sum | cut -c1-64)
  # shellcheck disable=SC2059
  { printf "$opad"; printf "$(printf '%s' "$inner" | sed 's/../\\x&/g')"; } | sha256sum | cut -c1-64
}
# A JSON string: quotes and backslashes escaped, control characters dropped.
_rv_json_str() {
  local s
  s=$(printf '%s' "$1" | tr -d '\000-\037')
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
# _rv_notify EVENT STATE [EXIT_CODE]: POSTs the event, signed; a failure is logged, never fatal.
# The body names its request (the receiver derives the key from it, and requires X-Rv-Request to
# match) and carries a random event_id for receivers to drop replays and duplicates.
_rv_notify() {
  [ -n "${_rv_notify_url:-}" ] && [ -n "${_rv_notify_key:-}" ] || return 0
  local body sig file url code id
  id=$(od -An -N8 -tx1 /dev/urandom 2>/dev/null | tr -d ' \n')
  [ -n "$id" ] || id="$(date +%s%N)$$"
  body=$(printf '{"event":%s,"event_id":%s,"request_id":%s,"job_id":%s,"job_name":%s,"state":%s,"exit_code":%s,"node":%s,"segment":%s,"time":%s}' \
    "$(_rv_json_str "$1")" "$(_rv_json_str "$id")" "$(_rv_json_str "${RV_REQUEST_ID:-}")" "$(_rv_json_str "${SLURM_JOB_ID:-}")" \
    "$(_rv_json_str "${RV_JOB_NAME:-}")" "$(_rv_json_str "$2")" "${3:-null}" \
    "$(_rv_json_str "${SLURMD_NODENAME:-$(hostname)}")" "${RV_SEGMENT:-null}" "$(date +%s)")
  sig=$(printf '%s' "$body" | _rv_hmac_sha256 "$_rv_notify_key")
  url=${_rv_notify_url//\\/\\\\}
  url=${url//\"/\\\"}
  if command -v curl >/dev/null 2>&1; then
    file=$(umask 077 && mktemp "${TMPDIR:-/tmp}/rv-notify.XXXXXX") || return 0
    printf '%s' "$body" >"$file"
    # The URL (a secret for Slack-style hooks) goes in curl's config on stdin, not in argv.
    code=$(printf 'url = "%s"\n' "$url" | curl -sS -m 10 -o /dev/null -w '%{http_code}' -K - -X POST \
      -H 'Content-Type: application/json' -H "X-Rv-Event: $1" -H "X-Rv-Event-Id: $id" \
      -H "X-Rv-Request: ${RV_REQUEST_ID:-}" -H "X-Rv-Signature: sha256=$sig" --data-binary @"$file" 2>&1)
    rm -f -- "$file"
  elif command -v python3 >/dev/null 2>&1; then
    code=$(_RV_URL="$_rv_notify_url" _RV_BODY="$body" _RV_SIG="$sig" _RV_EVENT="$1" _RV_EVENT_ID="$id" python3 -c '
import os, urllib.request
r = urllib.request.Request(os.environ["_RV_URL"], data=os.environ["_RV_BODY"].encode(), method="POST", headers={
    "Content-Type": "application/json", "X-Rv-Event": os.environ["_RV_EVENT"], "X-Rv-Event-Id": os.environ["_RV_EVENT_ID"],
    "X-Rv-Request": os.environ.get("RV_REQUEST_ID", ""), "X-Rv-Signature": "sha256=" + os.environ["_RV_SIG"]})
try:
    print(urllib.request.urlopen(r, timeout=10).status)
except Exception as e:
    print(getattr(e, "code", e))' 2>&1)
  else
    _rv_log "warning: notification '$1' not sent: neither curl nor python3 on this node"
    return 0
  fi
  case "$code" in
  2??) _rv_log "notification '$1' sent" ;;
  *) _rv_log "warning: notification '$1' not delivered: $code" ;;
  esac
  return 0
}
# _rv_notify_end STATUS: the end event, COMPLETED for 0, else FAILED, with the exit code.
_rv_notify_end() {
  if [ "$1" = 0 ]; then _rv_notify end COMPLETED 0; else _rv_notify end FAILED "$1"; fi
}
)sh";

} // namespace

std::string notify_functions(const Context& ctx)
{
  return ctx.options.notify_webhook && !ctx.step ? std::string(k_notify_functions) : std::string();
}

std::string notify_start(const Context& ctx)
{
  const auto& o = ctx.options;
  std::string out;
  if (ctx.step) {
    return out;
  }
  // With siblings, Slurm would mail every one of them: the job that runs turns its mail on.
  if (!o.notify_mail_user.empty() && o.strategy_count > 1) {
    out += fmt::format("\n# Slurm mail for the job that runs (siblings cancelled unstarted send none).\n"
                       "scontrol update JobId=\"$SLURM_JOB_ID\" MailUser={} MailType=END,FAIL,REQUEUE ||\n"
                       "  _rv_log \"warning: could not turn on Slurm mail for this job\"\n",
                       proc::shell_quote(o.notify_mail_user));
  }
  if (o.notify_webhook) {
    out += "_rv_notify start RUNNING\n";
    if (!ctx.checkpoint) {
      // scancel and the time limit send SIGTERM before SIGKILL: say so while there is time.
      out += "trap '_rv_notify end TERMINATED 143; exit 143' TERM\n";
    }
  }
  return out;
}

std::string notify_end(const Context& ctx)
{
  return ctx.options.notify_webhook && !ctx.step ? std::string("_rv_notify_end \"$_rv_status\"\n") : std::string();
}

std::string notify_resubmit(const Context& ctx)
{
  return ctx.options.notify_webhook ? std::string("_rv_notify resubmitted REQUEUED \"$_rv_status\"\n") : std::string();
}

} // namespace rv::templates::detail
