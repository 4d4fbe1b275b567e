#include "slurm/gres.hpp"

#include "core/checked.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <limits>

namespace rv::slurm {
namespace {

// Adds `count` GPUs of `type`; fails when the list's total would not fit an int, so that every
// sum over a parsed list (total_gpus, Node::gpus_total) fits one. `what` is "GRES" or "TRES",
// `list` the text being parsed, for the message.
Result<bool> add(std::vector<model::GpuGres>& out, std::string type, int count, std::string_view what,
                 std::string_view list)
{
  if (count <= 0) {
    return true;
  }
  if (type.size() > model::max_gpu_type_length) {
    return fail(ErrorCode::parse,
                fmt::format("GPU type '{}' in {} '{}' is longer than {} characters", text::shorten(type), what,
                            text::shorten(list), model::max_gpu_type_length));
  }
  if (!checked_add(total_gpus(out), count)) {
    return fail(ErrorCode::parse, fmt::format("GPU counts in {} '{}' add up to more than {}", what, text::shorten(list),
                                              std::numeric_limits<int>::max()));
  }
  for (auto& g : out) {
    if (g.type == type) {
      g.count += count; // within the total checked above
      return true;
    }
  }
  out.push_back(model::GpuGres{std::move(type), count});
  return true;
}

// Parses `gpu`, `gpu:N`, `gpu:type:N`, `gpu:type:no_consume:N` (suffix `(S:..)` already cut).
// Returns false when the token is not a well-formed GPU entry.
bool parse_gpu_token(std::string_view token, std::string& type, int& count)
{
  const auto first = token.find(':');
  if (first == std::string_view::npos) { // bare `gpu` means one
    type.clear();
    count = 1;
    return true;
  }
  const auto last = token.rfind(':');
  auto n = text::to_int32(token.substr(last + 1));
  if (!n || *n < 0) {
    return false;
  }
  count = *n;
  type.clear();
  if (last != first) { // `gpu:type:N`, `gpu:type:no_consume:N`: the type is the second field
    auto t = token.substr(first + 1, token.find(':', first + 1) - first - 1);
    type = (t == "(null)" || t == "no_consume") ? "" : std::string(t);
  }
  return true;
}

} // namespace

Result<std::vector<model::GpuGres>> parse_gres(std::string_view gres)
{
  std::vector<model::GpuGres> out;
  gres = text::trim(gres);
  if (text::is_null(gres)) {
    return out;
  }
  auto tokens = text::split_top_level(gres, ',');
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    // `gpu:(null):2` is an untyped GPU on some versions: drop the marker before the suffix.
    std::string_view token = text::trim(tokens[i]);
    std::string cleaned;
    if (auto null_at = token.find(":(null):"); null_at != std::string_view::npos) {
      cleaned = token;
      cleaned.erase(null_at + 1, 6);
      token = cleaned;
    }
    bool last = i + 1 == tokens.size();
    if (auto paren = token.find('('); paren != std::string_view::npos) {
      token = token.substr(0, paren); // `(S:0-1)`, `(IDX:0,2-3)`, `(-/5,5/5)`
    }
    auto name = token.substr(0, token.find(':'));
    if (name != "gpu") {
      continue;
    }
    std::string type;
    int count = 0;
    if (!parse_gpu_token(token, type, count)) {
      if (last) {
        break; // cut by a fixed column width: what is left is unknowable
      }
      return fail(ErrorCode::parse,
                  fmt::format("malformed GPU GRES '{}' in '{}'", text::shorten(token), text::shorten(gres)));
    }
    RV_TRY(ok, add(out, std::move(type), count, "GRES", gres));
    (void)ok;
  }
  return out;
}

std::map<std::string, std::string> parse_tres_map(std::string_view tres)
{
  std::map<std::string, std::string> out;
  if (text::is_null(tres)) {
    return out;
  }
  for (auto item : text::split(text::trim(tres), ",")) {
    item = text::trim(item);
    while (!item.empty() && item.back() == '+') {
      item.remove_suffix(1); // sacct marks a cut column with '+'
    }
    auto eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) {
      continue;
    }
    out.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return out;
}

Result<std::vector<model::GpuGres>> parse_tres_gpus(std::string_view tres)
{
  tres = text::trim(tres);
  if (text::is_null(tres)) {
    return std::vector<model::GpuGres>{};
  }
  if (tres.find('=') == std::string_view::npos) {
    // TresPerNode: `gpu:tesla:4` (20.x), `gres:gpu:4` or `gres/gpu:4` (later).
    std::string cleaned;
    for (auto item : text::split_top_level(tres, ',')) {
      item = text::trim(item);
      if (item.rfind("gres:", 0) == 0 || item.rfind("gres/", 0) == 0) {
        item.remove_prefix(5);
      }
      cleaned += cleaned.empty() ? "" : ",";
      cleaned += item;
    }
    return parse_gres(cleaned);
  }
  std::vector<model::GpuGres> typed;
  int untyped = 0;
  for (const auto& [key, value] : parse_tres_map(tres)) {
    if (key.rfind("gres/gpu", 0) != 0) {
      continue;
    }
    auto n = text::to_int32(value);
    if (!n) {
      continue; // a cut value like `gres/gpu:a100=` gives no count
    }
    if (key == "gres/gpu") {
      untyped = *n;
    } else if (key.size() > 9 && key[8] == ':') {
      RV_TRY(ok, add(typed, key.substr(9), *n, "TRES", tres));
      (void)ok;
    }
  }
  auto typed_sum = total_gpus(typed);
  if (untyped > typed_sum) {
    RV_TRY(ok, add(typed, "", untyped - typed_sum, "TRES", tres));
    (void)ok;
  }
  return typed;
}

int total_gpus(const std::vector<model::GpuGres>& gpus)
{
  int n = 0;
  for (const auto& g : gpus) {
    n += g.count;
  }
  return n;
}

} // namespace rv::slurm
