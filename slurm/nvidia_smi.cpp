#include "slurm/nvidia_smi.hpp"

#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace rv::slurm {
namespace {

constexpr std::size_t k_quote_max = 80; // how much of a bad line an error quotes

Error bad_line(std::string_view what, std::string_view line)
{
  return Error{ErrorCode::parse, fmt::format("nvidia-smi: {}: '{}'", what, text::shorten(line, k_quote_max)),
               "run the same nvidia-smi command on the node to see what it printed"};
}

// `memory.used [MiB]` -> `memory.used`.
std::string field_name(std::string_view header_cell)
{
  auto t = text::trim(header_cell);
  if (auto open = t.find(" ["); open != std::string_view::npos && t.ends_with(']')) {
    t = text::trim(t.substr(0, open));
  }
  return std::string(t);
}

bool is_number(std::string_view s)
{
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    s.remove_prefix(1);
  }
  bool digit = false, dot = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digit;
}

// A cell's value: nullopt for the tool's "no value" markers, else the text without its unit.
std::optional<std::string> cell_value(std::string_view raw)
{
  auto t = text::trim(raw);
  if (t.empty() || t == "N/A" || (t.size() >= 2 && t.front() == '[' && t.back() == ']')) {
    return std::nullopt; // [N/A], [Not Supported], [Unknown Error], [Insufficient Permissions], ...
  }
  constexpr std::array<std::string_view, 9> units{"%", "MiB", "KiB", "GiB", "W", "MHz", "C", "ms", "s"};
  if (auto sp = t.rfind(' '); sp != std::string_view::npos && is_number(t.substr(0, sp))) {
    auto unit = t.substr(sp + 1);
    if (std::find(units.begin(), units.end(), unit) != units.end()) {
      return std::string(t.substr(0, sp));
    }
  }
  return std::string(t);
}

// The cells of a line: nvidia-smi separates them with ", ". Surplus cells belong to a name
// field with ", " in it: joined back there (the first such field), when there is one.
Result<std::vector<std::string>> cells_of(std::string_view line, const std::vector<std::string>& fields)
{
  auto parts = text::split(line, ", ");
  if (parts.size() < fields.size()) {
    parts = text::split(line, ","); // a hand-written or reformatted CSV without the blank
  }
  std::vector<std::string> cells(parts.begin(), parts.end());
  if (cells.size() > fields.size()) {
    static constexpr std::array<std::string_view, 3> names{"name", "process_name", "gpu_name"};
    auto at = std::find_first_of(fields.begin(), fields.end(), names.begin(), names.end());
    if (at == fields.end()) {
      return std::unexpected(bad_line(fmt::format("{} values for {} fields", cells.size(), fields.size()), line));
    }
    const auto i = static_cast<std::size_t>(at - fields.begin());
    const auto extra = cells.size() - fields.size();
    for (std::size_t k = 1; k <= extra; ++k) {
      cells[i] += ", " + cells[i + k];
    }
    cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(i + 1),
                cells.begin() + static_cast<std::ptrdiff_t>(i + 1 + extra));
  }
  if (cells.size() < fields.size()) {
    return std::unexpected(bad_line(fmt::format("{} values for {} fields", cells.size(), fields.size()), line));
  }
  return cells;
}

std::optional<std::int64_t> whole(const std::optional<std::string>& v)
{
  if (!v) {
    return std::nullopt;
  }
  if (auto n = text::to_int(*v)) {
    return n;
  }
  auto d = text::to_double(*v); // a decimal (some fields print them): its whole part
  if (d && std::isfinite(*d) && std::fabs(*d) < 9e15) {
    return static_cast<std::int64_t>(*d);
  }
  return std::nullopt;
}

std::optional<int> small(const std::optional<std::string>& v)
{
  auto n = whole(v);
  if (!n || *n < std::numeric_limits<int>::min() || *n > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(*n);
}

// The first of `names` the table has in row `r`.
std::optional<std::string> any_cell(const SmiTable& t, std::size_t r, std::initializer_list<std::string_view> names)
{
  for (auto n : names) {
    if (auto v = t.cell(r, n)) {
      return v;
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> SmiTable::cell(std::size_t row, std::string_view field) const
{
  auto it = std::find(fields.begin(), fields.end(), field);
  if (row >= rows.size() || it == fields.end()) {
    return std::nullopt;
  }
  return rows[row][static_cast<std::size_t>(it - fields.begin())];
}

Result<SmiTable> parse_smi_csv(std::string_view text, const std::vector<std::string>& fields)
{
  SmiTable t;
  t.fields = fields;
  bool first = true;
  for (auto raw : text::lines(text)) {
    auto line = raw; // without its '\r' and trailing blanks
    if (text::trim(line).empty()) {
      continue;
    }
    if (first) {
      first = false;
      auto head = text::split(line, ",");
      if (t.fields.empty()) {
        for (auto h : head) {
          t.fields.push_back(field_name(h));
        }
        if (std::any_of(t.fields.begin(), t.fields.end(), [](const std::string& f) { return f.empty(); })) {
          return std::unexpected(bad_line("not a CSV header", line));
        }
        continue;
      }
      if (field_name(head.front()) == t.fields.front() && head.size() == t.fields.size()) {
        continue; // a header although the caller expected none
      }
    }
    RV_TRY(cells, cells_of(line, t.fields));
    auto& row = t.rows.emplace_back();
    for (const auto& c : cells) {
      row.push_back(cell_value(c));
    }
  }
  if (t.fields.empty()) {
    return std::unexpected(bad_line("no CSV header", text));
  }
  return t;
}

Result<std::vector<GpuReading>> read_gpus(const SmiTable& table)
{
  std::vector<GpuReading> gpus;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    GpuReading g;
    auto index = small(table.cell(r, "index"));
    if (!index || *index < 0) {
      return std::unexpected(bad_line("a GPU row without an index", table.cell(r, "index").value_or("")));
    }
    g.index = *index;
    g.name = table.cell(r, "name").value_or("");
    g.uuid = any_cell(table, r, {"uuid", "gpu_uuid"}).value_or("");
    g.bus_id = any_cell(table, r, {"pci.bus_id", "gpu_bus_id"}).value_or("");
    g.util_pct = small(table.cell(r, "utilization.gpu"));
    g.mem_used_mib = whole(table.cell(r, "memory.used"));
    g.mem_total_mib = whole(table.cell(r, "memory.total"));
    g.temp_c = small(table.cell(r, "temperature.gpu"));
    gpus.push_back(std::move(g));
  }
  return gpus;
}

Result<std::vector<GpuProcess>> read_processes(const SmiTable& table)
{
  std::vector<GpuProcess> procs;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    GpuProcess p;
    auto pid = whole(table.cell(r, "pid"));
    if (!pid || *pid < 0) {
      return std::unexpected(bad_line("a process row without a pid", table.cell(r, "pid").value_or("")));
    }
    p.pid = *pid;
    p.gpu_uuid = table.cell(r, "gpu_uuid").value_or("");
    p.gpu_bus_id = table.cell(r, "gpu_bus_id").value_or("");
    p.name = any_cell(table, r, {"process_name", "name"}).value_or("");
    p.used_mib = whole(any_cell(table, r, {"used_gpu_memory", "used_memory"}));
    procs.push_back(std::move(p));
  }
  return procs;
}

namespace {

// `(UUID: X)` at the end of `s`: X, or "".
std::string uuid_in(std::string_view s)
{
  constexpr std::string_view key = "(UUID: ";
  auto at = s.rfind(key);
  if (at == std::string_view::npos || !s.ends_with(')')) {
    return {};
  }
  return std::string(text::trim(s.substr(at + key.size(), s.size() - at - key.size() - 1)));
}

} // namespace

Result<std::vector<ListedGpu>> parse_gpu_list(std::string_view text)
{
  std::vector<ListedGpu> gpus;
  for (auto raw : text::lines(text)) {
    auto line = text::trim(raw);
    if (line.empty()) {
      continue;
    }
    if (line.starts_with("GPU ")) {
      const auto colon = line.find(": ");
      const auto open = line.rfind(" (UUID: ");
      auto uuid = uuid_in(line);
      if (colon == std::string_view::npos || open == std::string_view::npos || open < colon + 2 || uuid.empty()) {
        return std::unexpected(bad_line("not a GPU line of nvidia-smi -L", line));
      }
      const int index = text::to_int32(line.substr(4, colon - 4)).value_or(-1);
      if (index < 0) {
        return std::unexpected(bad_line("not a GPU line of nvidia-smi -L", line));
      }
      gpus.push_back({index, std::string(line.substr(colon + 2, open - colon - 2)), std::move(uuid), {}});
      continue;
    }
    if (line.starts_with("MIG ") && !gpus.empty()) {
      // `MIG 1g.10gb     Device  0: (UUID: MIG-...)`
      auto words = text::split_ws(line);
      auto uuid = uuid_in(line);
      int device = -1;
      if (words.size() >= 4 && words[2] == "Device" && words[3].ends_with(':')) {
        device = text::to_int32(words[3].substr(0, words[3].size() - 1)).value_or(-1);
      }
      if (device < 0 || uuid.empty()) {
        return std::unexpected(bad_line("not a MIG line of nvidia-smi -L", line));
      }
      gpus.back().mig.push_back({std::string(words[1]), device, std::move(uuid)});
      continue;
    }
    return std::unexpected(bad_line("not a line of nvidia-smi -L", line));
  }
  return gpus;
}

} // namespace rv::slurm
