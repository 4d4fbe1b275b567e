// Request records as stored: lossless JSON bytes, then the request record read from them.
// What parses dumps back and parses to the same document; the readers of its nested fields
// (git_label, refanout_lines, planned_su) never throw.
#include "app/request/record_view.hpp"
#include "app/request/requests.hpp"
#include "app/run/launch/refanout.hpp"
#include "core/store/json_bytes.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  auto doc = rv::store::parse_lossless(rv::fuzz::text(data, size));
  if (!doc) {
    return 0;
  }
  if (auto bytes = rv::store::dump_lossless(*doc)) {
    auto again = rv::store::parse_lossless(*bytes);
    RV_FUZZ_CHECK(again.has_value() && *again == *doc);
  }
  (void)rv::store::dump_for_display(*doc);
  if (auto r = rv::app::request_from_json(*doc)) {
    (void)rv::app::to_json(*r);
    // The readers of the free-form nested fields (`rv ps -a`, `rv why`): never a type_error (N5).
    (void)rv::app::git_label(*r);
    (void)rv::app::refanout_lines(r->refanout);
    for (const auto& j : r->jobs) {
      (void)rv::app::planned_su(*r, j.strategy_id);
    }
  }
  return 0;
}
